// Device helpers shared by the attention kernels (the window's and the sparse one): base-2
// constants, element conversions, 16-byte streaming loads and warp reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace hgca::gpu::kernels {

// Kernels work in base 2 inside (exp2 of scores pre-scaled by log2 e); LSE leaves in natural log.
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

/// 8 16-bit elements from one 16-byte load.
template <typename T>
__device__ __forceinline__ void unpack8(const uint4& u, float (&f)[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      // bf16 → fp32 is a shift: low half is element 2i, high half element 2i+1.
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    } else {
      const float2 x = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  }
}

/// Streaming 16-byte load of K/V, read once per call: keep it out of L1.
__device__ __forceinline__ uint4 load_stream16(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

/// Sums v[0..GM) over the kTpk lanes sharing a key (lane index dl within them, kTpk ≥ GM, both
/// powers of two). Returns the head whose total this lane then holds in v[0]; every lane of the
/// group holds one head, and the kTpk / GM lanes with equal low bits hold the same head.
template <int GM, int kTpk>
__device__ __forceinline__ int reduce_scatter(float (&v)[GM], int dl) {
  static_assert(kTpk >= GM, "one head per lane at least");
  int head = 0;
#pragma unroll
  for (int cnt = GM, off = kTpk / 2; cnt > 1; cnt >>= 1, off >>= 1) {
    const bool upper = (dl & off) != 0;
#pragma unroll
    for (int i = 0; i < cnt / 2; ++i) {
      const float keep = upper ? v[i + cnt / 2] : v[i];
      const float send = upper ? v[i] : v[i + cnt / 2];
      v[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
    }
    if (upper) head += cnt / 2;
  }
#pragma unroll
  for (int off = kTpk / (2 * GM); off > 0; off >>= 1)
    v[0] += __shfl_xor_sync(0xffffffffu, v[0], off);
  return head;
}

}  // namespace hgca::gpu::kernels
