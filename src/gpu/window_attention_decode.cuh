// The decode path (every sequence brings one new token), fp16/bf16, head dim 64/128/256:
// flash-decoding. The split kernel takes a slice of one (sequence, KV head)'s keys and all G
// query heads of the group, so each K/V row is read once, with 16-byte loads; it keeps the slice's
// scores in shared memory (K pass, then V pass: no online rescaling) and leaves them, base 2, in
// the workspace. The combine kernel merges the slices' partial states into o and LSE and turns
// the stored scores into the MAW observation of every key in parallel, with no second read of K.
#pragma once

#include "gpu/window_attention_common.cuh"

namespace hgca::gpu::kernels {

inline constexpr int kDecThreads = 128;  // 4 warps
inline constexpr int kDecWarps = kDecThreads / 32;
inline constexpr int kCombineThreads = 256;
/// Split blocks per SM asked of the register allocator (64 / 72 / 80 / 128 registers): enough
/// warps with loads in flight to cover HBM latency, no spills (ptxas -v).
constexpr int dec_min_blocks(int gm) { return gm == 1 ? 8 : gm == 2 ? 7 : gm == 4 ? 6 : 4; }

/// Where one decode launch keeps its intermediates in the caller's workspace.
struct DecodeLayout {
  int32_t split = 0;       ///< keys per slice
  int32_t n_split = 0;     ///< slices of the longest sequence (grid x)
  int64_t sc_stride = 0;   ///< scores row length (≥ longest key count)
  float* part_m = nullptr;  ///< [b, Hkv, n_split, G] slice max (base 2)
  float* part_l = nullptr;  ///< [b, Hkv, n_split, G] Σ exp2(s − m) over the slice
  float* part_o = nullptr;  ///< [b, Hkv, n_split, G, D] Σ exp2(s − m)·v over the slice
  float* scores = nullptr;  ///< [b, Hq, sc_stride] q·k·sm_scale·log2 e
};

/// Dynamic shared memory of decode_split_kernel: the slice's scores, reused for the warps' o.
inline std::size_t decode_split_smem(int split, int gm, int d) {
  const std::size_t scores = static_cast<std::size_t>(gm) * split;
  const std::size_t reduce = static_cast<std::size_t>(kDecWarps) * gm * d;
  return sizeof(float) * (scores > reduce ? scores : reduce);
}

/// Grid (slices, Hkv, sequences). GM ≥ G is the group size compiled for (extra heads masked).
template <typename T, int D, int GM>
__global__ void __launch_bounds__(kDecThreads, dec_min_blocks(GM)) decode_split_kernel(KernelArgs p, SeqBatch sb,
                                                                   DecodeLayout lay) {
  constexpr int kTpk = D / 8;             // lanes per key row (16 bytes each)
  constexpr int kKpw = 32 / kTpk;         // keys per warp per load
  constexpr int kKpb = kDecWarps * kKpw;  // keys per block per load
  constexpr int kUnroll = 4;              // loads per thread per step; two steps in flight
  constexpr int kStep = kKpb * kUnroll;

  const WindowSeq s = sb.get(blockIdx.z);
  const int h = blockIdx.y, c = blockIdx.x, G = p.group;
  const int n_keys = s.w + 1;
  const int k0 = c * lay.split;
  if (k0 >= n_keys) return;
  const int n = min(lay.split, n_keys - k0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kg = lane / kTpk, dl = lane % kTpk;
  const int key_lane = warp * kKpw + kg;  // this thread's key within a load step

  const int64_t ring_off =
      (static_cast<int64_t>(s.ring) * p.n_kv_heads + h) * p.capacity * D + dl * 8;
  const T* ring_k = static_cast<const T*>(p.ring_k) + ring_off;
  const T* ring_v = static_cast<const T*>(p.ring_v) + ring_off;
  const int64_t new_off = (s.q_row * p.n_kv_heads + h) * D + dl * 8;
  const T* k_new = static_cast<const T*>(p.k_new) + new_off;
  const T* v_new = static_cast<const T*>(p.v_new) + new_off;
  // Loads the 16 bytes of this thread for the keys of step `base` (zeros past the slice).
  auto load_step = [&](const T* ring, const T* fresh, int base, uint4 (&raw)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int jj = base + u * kKpb + key_lane;
      raw[u] = make_uint4(0, 0, 0, 0);
      if (jj < n) {
        const int j = k0 + jj;
        int slot = s.tail + j;
        if (slot >= p.capacity) slot -= p.capacity;
        raw[u] = load_stream16(j < s.w ? ring + static_cast<int64_t>(slot) * D : fresh);
      }
    }
  };

  extern __shared__ float smem[];
  float* sc = smem;  // [GM][split]

  // ---- K pass: scores of the slice ----
  float q[GM][8];
  {
    const T* qp = static_cast<const T*>(p.q) + (s.q_row * p.n_q_heads + h * G) * D + dl * 8;
#pragma unroll
    for (int g = 0; g < GM; ++g) {
      if (g < G) {
        unpack8<T>(__ldg(reinterpret_cast<const uint4*>(qp + g * D)), q[g]);
#pragma unroll
        for (int e = 0; e < 8; ++e) q[g][e] *= p.scale2;
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) q[g][e] = 0.0f;
      }
    }
  }
  uint4 cur[kUnroll];
  load_step(ring_k, k_new, 0, cur);
  for (int base = 0; base < n; base += kStep) {
    uint4 nxt[kUnroll];
    load_step(ring_k, k_new, base + kStep, nxt);  // next step in flight while this one computes
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int jj = base + u * kKpb + key_lane;
      float kf[8];
      unpack8<T>(cur[u], kf);
      float sg[GM];
#pragma unroll
      for (int g = 0; g < GM; ++g) {
        float acc = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc = fmaf(q[g][e], kf[e], acc);
        sg[g] = acc;
      }
      // Sum over the key's kTpk lanes: reduce-scatter (each step halves the heads a lane
      // carries) then a plain reduction; shuffles per key fall from GM·log2(kTpk) to about
      // GM + log2(kTpk). Afterwards lane dl holds head reduce_head(dl).
      const int mine = reduce_scatter<GM, kTpk>(sg, dl);
      if (jj < n && (dl & (kTpk / GM - 1)) == 0 && mine < G) sc[mine * lay.split + jj] = sg[0];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) cur[u] = nxt[u];
  }
  load_step(ring_v, v_new, 0, cur);  // V's first step in flight across the statistics
  __syncthreads();

  // ---- slice max and sum per head; scores out to the workspace; sc becomes exp2(s − m) ----
  const int64_t part = ((static_cast<int64_t>(blockIdx.z) * p.n_kv_heads + h) * lay.n_split + c) * G;
  for (int g = warp; g < G; g += kDecWarps) {
    float* row = sc + g * lay.split;
    float* out = lay.scores + (static_cast<int64_t>(blockIdx.z) * p.n_q_heads + h * G + g) *
                                  lay.sc_stride + k0;
    float m = -INFINITY;
    for (int jj = lane; jj < n; jj += 32) {
      const float v = row[jj];
      out[jj] = v;
      m = fmaxf(m, v);
    }
    m = warp_max(m);
    float l = 0.0f;
    for (int jj = lane; jj < n; jj += 32) {
      const float e = exp2f(row[jj] - m);
      row[jj] = e;
      l += e;
    }
    l = warp_sum(l);
    if (lane == 0) {
      lay.part_m[part + g] = m;
      lay.part_l[part + g] = l;
    }
  }
  __syncthreads();

  // ---- V pass: Σ exp2(s − m)·v ----
  float acc[GM][8];
#pragma unroll
  for (int g = 0; g < GM; ++g)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
  for (int base = 0; base < n; base += kStep) {
    uint4 nxt[kUnroll];
    load_step(ring_v, v_new, base + kStep, nxt);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int jj = base + u * kKpb + key_lane;
      if (jj < n) {
        float vf[8];
        unpack8<T>(cur[u], vf);
#pragma unroll
        for (int g = 0; g < GM; ++g) {
          const float pg = g < G ? sc[g * lay.split + jj] : 0.0f;
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(pg, vf[e], acc[g][e]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) cur[u] = nxt[u];
  }
  // Keys of a warp → one row per warp, then the warps through shared memory.
#pragma unroll
  for (int off = kTpk; off < 32; off <<= 1) {
#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], off);
  }
  __syncthreads();  // sc is dead: reuse it for the warps' rows
  float* red = smem;  // [warps][G][D]
  if (kg == 0) {
#pragma unroll
    for (int g = 0; g < GM; ++g) {
      if (g < G) {
        float4* dst = reinterpret_cast<float4*>(red + (warp * G + g) * D + dl * 8);
        dst[0] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
        dst[1] = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
      }
    }
  }
  __syncthreads();
  float* part_o = lay.part_o + part * D;
  for (int idx = threadIdx.x; idx < G * D; idx += kDecThreads) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < kDecWarps; ++w) t += red[w * G * D + idx];
    part_o[idx] = t;
  }
}

/// Grid (slices, Hkv, sequences). Every block merges the slices' (m, l) of its (sequence, KV
/// head) into the LSE; block x then writes its share of o (all its threads summing over the
/// slices in parallel) and the observations of slice x's keys.
__global__ void __launch_bounds__(kCombineThreads) decode_combine_kernel(KernelArgs p, SeqBatch sb,
                                                                         DecodeLayout lay) {
  const WindowSeq s = sb.get(blockIdx.z);
  const int h = blockIdx.y, c = blockIdx.x, G = p.group, D = p.head_dim;
  const int n_keys = s.w + 1;
  const int n_split = (n_keys + lay.split - 1) / lay.split;
  if (c >= n_split) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr int kWarps = kCombineThreads / 32;
  __shared__ float m_s[8], inv_l_s[8], lse2_s[8];
  __shared__ float red[kCombineThreads];

  const int64_t part0 = (static_cast<int64_t>(blockIdx.z) * p.n_kv_heads + h) * lay.n_split * G;
  for (int g = warp; g < G; g += kWarps) {
    float m = -INFINITY;
    for (int x = lane; x < n_split; x += 32) m = fmaxf(m, lay.part_m[part0 + x * G + g]);
    m = warp_max(m);
    float l = 0.0f;
    for (int x = lane; x < n_split; x += 32)
      l += lay.part_l[part0 + x * G + g] * exp2f(lay.part_m[part0 + x * G + g] - m);
    l = warp_sum(l);
    if (lane == 0) {
      m_s[g] = m;
      inv_l_s[g] = 1.0f / l;
      lse2_s[g] = m + log2f(l);
    }
  }
  __syncthreads();

  // o: the group's G·D elements in chunks of E; thread t sums element t % E of its chunk over
  // the slices ≡ t / E (mod P), then the P phases are added through shared memory.
  const int gd = G * D;
  int e_chunk = 1;
  while (e_chunk < kCombineThreads && e_chunk * n_split < gd) e_chunk <<= 1;
  const int phases = kCombineThreads / e_chunk;
  const int ei = threadIdx.x % e_chunk, ph = threadIdx.x / e_chunk;
  const int64_t q_head0 = s.q_row * p.n_q_heads + h * G;
  for (int e0 = c * e_chunk; e0 < gd; e0 += n_split * e_chunk) {  // block-uniform
    const int idx = e0 + ei;
    float t = 0.0f;
    if (idx < gd) {
      const int g = idx / D;
      for (int x = ph; x < n_split; x += phases) {
        const float wgt = exp2f(lay.part_m[part0 + x * G + g] - m_s[g]);
        t = fmaf(lay.part_o[(part0 + x * G) * D + idx], wgt, t);
      }
    }
    red[threadIdx.x] = t;
    __syncthreads();
    for (int half = phases / 2; half > 0; half >>= 1) {
      if (ph < half) red[threadIdx.x] += red[threadIdx.x + half * e_chunk];
      __syncthreads();
    }
    if (ph == 0 && idx < gd) p.o[q_head0 * D + idx] = red[threadIdx.x] * inv_l_s[idx / D];
    __syncthreads();
  }
  if (c == 0 && threadIdx.x < G) p.lse[q_head0 + threadIdx.x] = lse2_s[threadIdx.x] * kLn2;

  // Observations of this slice's keys: a = max over the group of exp2(s − lse2).
  const int k0 = c * lay.split, k1 = min(n_keys, k0 + lay.split);
  const float* sc = lay.scores + (static_cast<int64_t>(blockIdx.z) * p.n_q_heads + h * G) *
                                     lay.sc_stride;
  for (int j = k0 + threadIdx.x; j < k1; j += kCombineThreads) {
    float a = 0.0f;
    for (int g = 0; g < G; ++g) a = fmaxf(a, exp2f(sc[g * lay.sc_stride + j] - lse2_s[g]));
    if (j < s.w) {
      int slot = s.tail + j;
      if (slot >= p.capacity) slot -= p.capacity;
      const int64_t idx = (static_cast<int64_t>(s.ring) * p.n_kv_heads + h) * p.capacity + slot;
      p.ring_maw[idx] = maw_blend(p.ring_maw[idx], a, p.alpha);
    } else {
      p.obs_new[s.obs_offset + h] = a;  // n_new = 1: new token 0 of KV head h
    }
  }
}

}  // namespace hgca::gpu::kernels
