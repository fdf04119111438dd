// The merge's floor on the GPU (see merge_floor.hpp): grid-stride kernels whose threads keep
// `per_thread` 16-byte loads of one grid stride apart in flight.
#include <cuda_runtime.h>

#include <algorithm>

#include "merge_floor.hpp"

namespace hgca::bench {
namespace {

__global__ void empty_kernel() {}

template <int kPer, bool kNc>
__global__ void mapped_read_kernel(const float4* o, const float* lse, int64_t rows, int32_t quads, unsigned* sink) {
  const int64_t total = rows * quads, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  unsigned acc = 0;
  for (int64_t x0 = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x0 < total; x0 += kPer * stride) {
    float l[kPer];
    float4 w[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      if (x < total) {
        l[u] = kNc ? __ldg(lse + x / quads) : lse[x / quads];
        w[u] = kNc ? __ldg(o + x) : o[x];
      }
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      if (x0 + u * stride < total) {
        acc ^= __float_as_uint(l[u]) ^ __float_as_uint(w[u].x) ^ __float_as_uint(w[u].y) ^ __float_as_uint(w[u].z) ^
               __float_as_uint(w[u].w);
      }
    }
  }
  if (acc == 0x9e3779b9u) atomicXor(sink, acc);  // almost never taken, but the compiler cannot know
}

template <int kPer>
__global__ void merge_shape_kernel(const float4* o_a, const float* lse_a, const float4* o_b, const float* lse_b,
                                   int64_t rows, int32_t quads, float4* out) {
  const int64_t total = rows * quads, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t x0 = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x0 < total; x0 += kPer * stride) {
    float ca[kPer], cb[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      ca[u] = cb[u] = 0.0f;
      if (x < total) {
        const int64_t r = x / quads;
        const float la = lse_a[r], lb = lse_b[r];
        const float m = fmaxf(la, lb);
        if (m != -INFINITY) {
          const float wa = expf(la - m), wb = expf(lb - m);
          const float inv = 1.0f / (wa + wb);
          ca[u] = wa * inv, cb[u] = wb * inv;
        }
      }
    }
    float4 a[kPer], b[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      if (x < total && ca[u] != 0.0f) a[u] = o_a[x];
      if (x < total && cb[u] != 0.0f) b[u] = o_b[x];
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int64_t x = x0 + u * stride;
      if (x >= total) continue;
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (ca[u] != 0.0f) v.x = ca[u] * a[u].x, v.y = ca[u] * a[u].y, v.z = ca[u] * a[u].z, v.w = ca[u] * a[u].w;
      if (cb[u] != 0.0f) v.x += cb[u] * b[u].x, v.y += cb[u] * b[u].y, v.z += cb[u] * b[u].z, v.w += cb[u] * b[u].w;
      out[x] = v;
    }
  }
}

unsigned grid(int64_t total, int threads, int per_thread, int max_blocks) {
  const int64_t per_block = static_cast<int64_t>(threads) * per_thread;
  const int64_t blocks = std::min<int64_t>((total + per_block - 1) / per_block, 65535);
  return static_cast<unsigned>(max_blocks > 0 ? std::min<int64_t>(blocks, max_blocks) : blocks);
}

}  // namespace

int launch_empty(int blocks, int threads, void* stream) {
  empty_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>();
  return cudaGetLastError();
}

int launch_mapped_read(const float* o, const float* lse, int64_t rows, int32_t quads, int threads, int per_thread,
                       int max_blocks, bool nc, unsigned* sink, void* stream) {
  const unsigned blocks = grid(rows * quads, threads, per_thread, max_blocks);
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* v = reinterpret_cast<const float4*>(o);
#define HGCA_READ(P)                                                                                   \
  (nc ? mapped_read_kernel<P, true><<<blocks, threads, 0, s>>>(v, lse, rows, quads, sink)             \
      : mapped_read_kernel<P, false><<<blocks, threads, 0, s>>>(v, lse, rows, quads, sink))
  switch (per_thread) {
    case 1: HGCA_READ(1); break;
    case 2: HGCA_READ(2); break;
    case 4: HGCA_READ(4); break;
    case 8: HGCA_READ(8); break;
    default: return cudaErrorInvalidValue;
  }
#undef HGCA_READ
  return cudaGetLastError();
}

int launch_merge_shape(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b, int64_t rows,
                       int32_t quads, int threads, int per_thread, int max_blocks, float* out, void* stream) {
  const unsigned blocks = grid(rows * quads, threads, per_thread, max_blocks);
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* a = reinterpret_cast<const float4*>(o_a);
  const auto* b = reinterpret_cast<const float4*>(o_b);
  auto* d = reinterpret_cast<float4*>(out);
  switch (per_thread) {
    case 1: merge_shape_kernel<1><<<blocks, threads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, d); break;
    case 2: merge_shape_kernel<2><<<blocks, threads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, d); break;
    case 4: merge_shape_kernel<4><<<blocks, threads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, d); break;
    case 8: merge_shape_kernel<8><<<blocks, threads, 0, s>>>(a, lse_a, b, lse_b, rows, quads, d); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace hgca::bench
