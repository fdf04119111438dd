// The zero-copy LSE merge kernel: one thread per 4 consecutive elements of a (token, head) row, so
// any number of heads and rows fits (no one-block-per-token limit), and the CPU's side streams
// over PCIe as 16-byte reads spread over the whole grid.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

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

template <typename T>
__global__ void merge_kernel(const float4* o_a, const float* lse_a, const float4* o_b,
                             const float* lse_b, int64_t rows, int32_t quads, T* out, float* lse_out) {
  const int64_t total = rows * quads;
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = x / quads;
    const float la = lse_a[r], lb = lse_b[r];
    const float m = fmaxf(la, lb);
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float lse = -INFINITY;
    if (m != -INFINITY) {  // both empty: 0 and -inf
      const float wa = expf(la - m), wb = expf(lb - m);  // exp(-inf) = 0: an empty side
      const float inv = 1.0f / (wa + wb);
      const float ca = wa * inv, cb = wb * inv;
      // An empty side's output is 0 by convention; never let 0·garbage reach the result.
      if (ca != 0.0f) {
        const float4 a = o_a[x];
        v.x = ca * a.x, v.y = ca * a.y, v.z = ca * a.z, v.w = ca * a.w;
      }
      if (cb != 0.0f) {
        const float4 b = o_b[x];
        v.x += cb * b.x, v.y += cb * b.y, v.z += cb * b.z, v.w += cb * b.w;
      }
      lse = m + logf(wa + wb);
    }
    store4(out + x * 4, v);
    if (lse_out && x % quads == 0) lse_out[r] = lse;
  }
}

}  // namespace

int launch_merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        int64_t rows, int32_t head_dim, DType dtype, void* out, float* lse_out,
                        void* stream) {
  if (rows == 0) return cudaSuccess;
  if (head_dim % 4 != 0) return cudaErrorInvalidValue;
  const int32_t quads = head_dim / 4;
  constexpr int kThreads = 256;
  const int64_t total = rows * quads;
  // Enough blocks for every thread to have one quad up to a point, then grid-stride.
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* a = reinterpret_cast<const float4*>(o_a);
  const auto* b = reinterpret_cast<const float4*>(o_b);
  switch (dtype) {
    case DType::kFloat32:
      merge_kernel<<<blocks, kThreads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, static_cast<float*>(out), lse_out);
      break;
    case DType::kFloat16:
      merge_kernel<<<blocks, kThreads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, static_cast<__half*>(out), lse_out);
      break;
    case DType::kBFloat16:
      merge_kernel<<<blocks, kThreads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, static_cast<__nv_bfloat16*>(out), lse_out);
      break;
  }
  return cudaGetLastError();
}

int load_merge_kernel(DType dtype) {
  cudaFuncAttributes attr{};
  switch (dtype) {
    case DType::kFloat32: return cudaFuncGetAttributes(&attr, merge_kernel<float>);
    case DType::kFloat16: return cudaFuncGetAttributes(&attr, merge_kernel<__half>);
    case DType::kBFloat16: return cudaFuncGetAttributes(&attr, merge_kernel<__nv_bfloat16>);
  }
  return cudaErrorInvalidValue;
}

}  // namespace hgca::merge
