// Device helpers of the window attention kernels: the key addressing of a sequence (window ring
// entries oldest-first, then its new tokens) and the MAW blend.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/attention_common.cuh"
#include "gpu/window_attention.hpp"

namespace hgca::gpu::kernels {

/// One sequence as the kernels get it: WindowSeq in 32-bit fields (the launcher checks they fit),
/// so a full launch's parameters stay under 4 KB, the size above which a launch costs the driver
/// (and the CPU) an extra copy of its parameters.
struct SeqDesc {
  int32_t q_row, obs_offset, n_new, w, tail, ring;
};

/// The launch's sequences, by value in the kernel parameters (no device metadata per step).
struct SeqBatch {
  SeqDesc seq[kMaxLaunchBatch];
  /// Sequence z widened back to WindowSeq (64-bit row offsets for the index arithmetic).
  __device__ __forceinline__ WindowSeq get(int z) const {
    const SeqDesc d = seq[z];
    WindowSeq s;
    s.q_row = d.q_row;
    s.obs_offset = d.obs_offset;
    s.n_new = d.n_new;
    s.w = d.w;
    s.tail = d.tail;
    s.ring = d.ring;
    return s;
  }
};

/// What every kernel gets besides the sequences: WindowAttentionParams minus host-only fields.
struct KernelArgs {
  const void* q;
  const void* k_new;
  const void* v_new;
  const void* ring_k;
  const void* ring_v;
  float* ring_maw;
  float* o;
  float* lse;
  float* obs_new;
  int32_t n_q_heads, n_kv_heads, group, head_dim, capacity;
  float scale2;  ///< sm_scale × log2 e
  float alpha;
};

/// Row of key j (0 = oldest window entry) of sequence s for KV head h: ring slot (tail + j) mod
/// capacity for j < w, else new token j − w from k_new / v_new ([T, Hkv, D]).
template <typename T>
__device__ __forceinline__ int64_t key_row(const WindowSeq& s, int32_t j, int32_t h, int32_t hkv,
                                           int32_t capacity, bool* in_ring) {
  if (j < s.w) {
    int32_t slot = s.tail + j;  // tail < capacity and j < w ≤ capacity: one subtraction wraps it
    if (slot >= capacity) slot -= capacity;
    *in_ring = true;
    return (static_cast<int64_t>(s.ring) * hkv + h) * capacity + slot;
  }
  *in_ring = false;
  return (s.q_row + (j - s.w)) * hkv + h;
}

/// MAW blend in place, exactly (1 − α)·maw + α·a (no FMA contraction, like the host twin).
__device__ __forceinline__ float maw_blend(float maw, float a, float alpha) {
  return __fadd_rn(__fmul_rn(1.0f - alpha, maw), __fmul_rn(alpha, a));
}

}  // namespace hgca::gpu::kernels
