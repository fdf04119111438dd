// The zero-copy LSE merge kernel: a thread per 4 consecutive elements of a (token, head) row at a
// time, grid-stride, so any number of heads and rows fits (no one-block-per-token limit), and the
// CPU's side streams over PCIe as 16-byte reads.
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

// Measured on the H200 (bench/results/gpu-runtime/merge-floor): the time is launch plus the PCIe
// read of the mapped side, so what matters is that the read starts at once and streams. Each thread
// keeps kPer quads of one grid stride apart in flight, both sides' values loaded with their LSE (one
// PCIe round trip, not the LSE's then the values'), and 8 blocks of 512 threads cover the benchmark's
// 32 × 32 × 128 in one pass.
constexpr int kThreads = 512, kPer = 8;

template <typename T>
__global__ void __launch_bounds__(kThreads) merge_kernel(const float4* o_a, const float* lse_a, const float4* o_b,
                                                        const float* lse_b, int64_t rows, int32_t quads, T* out,
                                                        float* lse_out) {
  const int64_t total = rows * quads, stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t x0 = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; x0 < total; x0 += kPer * stride) {
    float la[kPer], lb[kPer];
    float4 a[kPer], b[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      if (x < total) {
        const int64_t r = x / quads;
        la[u] = lse_a[r], lb[u] = lse_b[r];
        a[u] = o_a[x], b[u] = o_b[x];  // an empty side's may be garbage: it is never used
      }
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      if (x >= total) break;
      const float m = fmaxf(la[u], lb[u]);
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      float lse = -INFINITY;
      if (m != -INFINITY) {  // both empty: 0 and -inf
        const float wa = expf(la[u] - m), wb = expf(lb[u] - m);  // exp(-inf) = 0: an empty side
        const float inv = 1.0f / (wa + wb);
        const float ca = wa * inv, cb = wb * inv;
        // An empty side's output is 0 by convention; never let 0·garbage reach the result.
        if (ca != 0.0f) v.x = ca * a[u].x, v.y = ca * a[u].y, v.z = ca * a[u].z, v.w = ca * a[u].w;
        if (cb != 0.0f) v.x += cb * b[u].x, v.y += cb * b[u].y, v.z += cb * b[u].z, v.w += cb * b[u].w;
        lse = m + logf(wa + wb);
      }
      store4(out + x * 4, v);
      if (lse_out && x % quads == 0) lse_out[x / quads] = lse;
    }
  }
}

}  // namespace

int launch_merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        int64_t rows, int32_t head_dim, DType dtype, void* out, float* lse_out,
                        void* stream) {
  if (rows == 0) return cudaSuccess;
  if (head_dim % 4 != 0) return cudaErrorInvalidValue;
  const int32_t quads = head_dim / 4;
  const int64_t total = rows * quads;
  // Enough blocks for every thread to have kPer quads up to a point, then grid-stride.
  constexpr int64_t kPerBlock = int64_t{kThreads} * kPer;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + kPerBlock - 1) / kPerBlock, 65535));
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
