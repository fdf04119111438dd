// The zero-copy LSE merge kernel: one thread per 4 consecutive elements of a (token, head) row, so
// any number of heads and rows fits (no one-block-per-token limit), and the CPU's side streams
// over PCIe as 16-byte reads spread over the whole grid. Two or three sides in one launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "merge/merge_cuda.hpp"

namespace hgca::merge {
namespace {

template <typename T>
__device__ inline void store4(T* out, float4 v);
template <>
__device__ inline void store4<float>(float* out, float4 v) {
  *reinterpret_cast<float4*>(out) = v;
}
template <>
__device__ inline void store4<__half>(__half* out, float4 v) {
  const __half2 a = __floats2half2_rn(v.x, v.y), b = __floats2half2_rn(v.z, v.w);
  uint2 bits;
  bits.x = *reinterpret_cast<const uint32_t*>(&a);
  bits.y = *reinterpret_cast<const uint32_t*>(&b);
  *reinterpret_cast<uint2*>(out) = bits;
}
template <>
__device__ inline void store4<__nv_bfloat16>(__nv_bfloat16* out, float4 v) {
  const __nv_bfloat162 a = __floats2bfloat162_rn(v.x, v.y), b = __floats2bfloat162_rn(v.z, v.w);
  uint2 bits;
  bits.x = *reinterpret_cast<const uint32_t*>(&a);
  bits.y = *reinterpret_cast<const uint32_t*>(&b);
  *reinterpret_cast<uint2*>(out) = bits;
}

/// The sides of one merge, by value in the kernel's parameters.
template <int N>
struct Sides {
  const float4* o[N];
  const float* lse[N];
};

template <typename T, int N>
__global__ void merge_kernel(Sides<N> sides, int64_t rows, int32_t quads, T* out, float* lse_out) {
  const int64_t total = rows * quads;
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = x / quads;
    float l[N];
    for (int i = 0; i < N; ++i) l[i] = sides.lse[i][r];
    float m = l[0];
    for (int i = 1; i < N; ++i) m = fmaxf(m, l[i]);
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float lse = -INFINITY;
    if (m != -INFINITY) {  // every side empty: 0 and -inf
      float w[N], sum = 0.0f;
      for (int i = 0; i < N; ++i) w[i] = expf(l[i] - m), sum += w[i];  // exp(-inf) = 0: an empty side
      const float inv = 1.0f / sum;
      for (int i = 0; i < N; ++i) {
        // An empty side's output is 0 by convention; never let 0·garbage reach the result.
        if (const float c = w[i] * inv; c != 0.0f) {
          const float4 a = sides.o[i][x];
          v.x += c * a.x, v.y += c * a.y, v.z += c * a.z, v.w += c * a.w;
        }
      }
      lse = m + logf(sum);
    }
    store4(out + x * 4, v);
    if (lse_out && x % quads == 0) lse_out[r] = lse;
  }
}

template <int N>
int launch(const MergeSide* in, int64_t rows, int32_t head_dim, DType dtype, void* out, float* lse_out,
           cudaStream_t s) {
  if (rows < 0 || head_dim <= 0 || head_dim % 4 != 0) return cudaErrorInvalidValue;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16) return cudaErrorInvalidValue;
  // The kernel reads each side's o as float4 and writes out 4 elements at once: a misaligned
  // pointer would end the CUDA context (cudaErrorMisalignedAddress is sticky).
  const auto aligned = [](const void* p, std::size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; };
  for (int i = 0; i < N; ++i) {
    if (!aligned(in[i].o, 16) || !in[i].lse || !aligned(in[i].lse, 4)) return cudaErrorInvalidValue;
  }
  if (!out || !aligned(out, 4 * dtype_size(dtype)) || !aligned(lse_out, 4)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  Sides<N> sides;
  for (int i = 0; i < N; ++i) {
    sides.o[i] = reinterpret_cast<const float4*>(in[i].o);
    sides.lse[i] = in[i].lse;
  }
  const int32_t quads = head_dim / 4;
  constexpr int kThreads = 256;
  const int64_t total = rows * quads;
  // Enough blocks for every thread to have one quad up to a point, then grid-stride.
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  switch (dtype) {
    case DType::kFloat32:
      merge_kernel<<<blocks, kThreads, 0, s>>>(sides, rows, quads, static_cast<float*>(out), lse_out);
      break;
    case DType::kFloat16:
      merge_kernel<<<blocks, kThreads, 0, s>>>(sides, rows, quads, static_cast<__half*>(out), lse_out);
      break;
    case DType::kBFloat16:
      merge_kernel<<<blocks, kThreads, 0, s>>>(sides, rows, quads, static_cast<__nv_bfloat16*>(out), lse_out);
      break;
  }
  return cudaGetLastError();
}

template <typename T>
int load(cudaFuncAttributes* attr) {
  const cudaError_t e = cudaFuncGetAttributes(attr, merge_kernel<T, 2>);
  return e != cudaSuccess ? e : cudaFuncGetAttributes(attr, merge_kernel<T, 3>);
}

}  // namespace

int launch_merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        int64_t rows, int32_t head_dim, DType dtype, void* out, float* lse_out,
                        void* stream) {
  const MergeSide sides[2] = {{o_a, lse_a}, {o_b, lse_b}};
  return launch<2>(sides, rows, head_dim, dtype, out, lse_out, static_cast<cudaStream_t>(stream));
}

int launch_merge_states(std::span<const MergeSide> sides, int64_t rows, int32_t head_dim, DType dtype, void* out,
                        float* lse_out, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (sides.size()) {
    case 2: return launch<2>(sides.data(), rows, head_dim, dtype, out, lse_out, s);
    case 3: return launch<3>(sides.data(), rows, head_dim, dtype, out, lse_out, s);
    default: return cudaErrorInvalidValue;
  }
}

int load_merge_kernel(DType dtype) {
  cudaFuncAttributes attr{};
  switch (dtype) {
    case DType::kFloat32: return load<float>(&attr);
    case DType::kFloat16: return load<__half>(&attr);
    case DType::kBFloat16: return load<__nv_bfloat16>(&attr);
  }
  return cudaErrorInvalidValue;
}

}  // namespace hgca::merge
