// The generic window attention path: any dtype, any head dim (multiple of 8, ≤ 256), any group,
// any number of new tokens. Two kernels: attend (online softmax over key tiles, writes o and LSE),
// then observe (recomputes each key's scores against every row that sees it and turns them into
// the MAW observation a = max over the group of the mean over rows of exp(s − lse)). Where few
// query blocks would leave the GPU idle (decode: one per (sequence, KV head)), attend splits each
// block's keys into slices and a combine kernel merges the slices' partial results by their LSE.
#pragma once

#include "gpu/window_attention_common.cuh"

namespace hgca::gpu::kernels {

inline constexpr int kGenThreads = 256;         // 8 warps
inline constexpr int kGenQueriesPerWarp = 2;
inline constexpr int kGenQueriesPerBlock = 16;  // (row, group head) pairs of one KV head
inline constexpr int kGenKeyTile = 32;          // one key per lane
inline constexpr int kGenMaxDimPerLane = 8;     // 256 / 32
inline constexpr int kGenMaxSplits = 128;       // key slices of one query block, at most

/// The attend kernel's key split. Block x takes query block x / n_split and the keys
/// [c·split, (c + 1)·split) of its rows, c = x % n_split. With n_split 1 it writes o and the LSE;
/// otherwise its rows' unnormalized partials, which generic_combine_kernel merges.
struct GenericSplit {
  int32_t n_split = 1;
  int32_t split = 0;  ///< keys per slice, whole key tiles
  int32_t row0 = 0;   ///< the launch's first q row: partial rows count from it
  float* part_m = nullptr;  ///< [rows, Hq, n_split] the slice's max score (base 2), −∞ if it has none
  float* part_l = nullptr;  ///< [rows, Hq, n_split] Σ exp2(s − m) over the slice
  float* part_o = nullptr;  ///< [rows, Hq, n_split, D] Σ exp2(s − m)·v over the slice
};

/// Dynamic shared memory of generic_attend_kernel for head dim d.
inline std::size_t generic_attend_smem(int d) {
  return sizeof(float) * (kGenKeyTile * (d + 1) + kGenKeyTile * d + kGenQueriesPerBlock * d);
}
/// Dynamic shared memory of generic_observe_kernel for head dim d.
inline std::size_t generic_observe_smem(int d) {
  return sizeof(float) * (kGenKeyTile * (d + 1) + (kGenThreads / 32) * d + (kGenThreads / 32) * 32);
}

/// Loads keys [kt, kt + 32) ∩ [0, limit) of (sequence, KV head h) into shared memory as fp32:
/// K rows padded to d + 1 (lane-per-key reads hit distinct banks), V rows (if v_s) dense.
template <typename T>
__device__ __forceinline__ void load_kv_tile(const KernelArgs& p, const WindowSeq& s, int h,
                                             int kt, int limit, float* k_s, float* v_s) {
  const int d = p.head_dim;
  const T* ring_k = static_cast<const T*>(p.ring_k);
  const T* ring_v = static_cast<const T*>(p.ring_v);
  const T* k_new = static_cast<const T*>(p.k_new);
  const T* v_new = static_cast<const T*>(p.v_new);
  for (int idx = threadIdx.x; idx < kGenKeyTile * d; idx += blockDim.x) {
    const int kk = idx / d, e = idx - kk * d;
    const int j = kt + kk;
    float kv = 0.0f, vv = 0.0f;
    if (j < limit) {
      bool in_ring;
      const int64_t row = key_row<T>(s, j, h, p.n_kv_heads, p.capacity, &in_ring) * d + e;
      kv = to_f(in_ring ? ring_k[row] : k_new[row]);
      if (v_s) vv = to_f(in_ring ? ring_v[row] : v_new[row]);
    }
    k_s[kk * (d + 1) + e] = kv;
    if (v_s) v_s[kk * d + e] = vv;
  }
}

/// Grid (query blocks × slices, Hkv, sequences). Query block x takes the queries [16x, 16x + 16)
/// of the sequence's (row, group head) pairs of KV head y, flattened row-major (row r, head g →
/// r·G + g).
template <typename T>
__global__ void __launch_bounds__(kGenThreads) generic_attend_kernel(KernelArgs p, SeqBatch sb,
                                                                     GenericSplit sp) {
  const WindowSeq s = sb.get(blockIdx.z);
  const int h = blockIdx.y, G = p.group, d = p.head_dim;
  const int c = blockIdx.x % sp.n_split;
  const int q0 = blockIdx.x / sp.n_split * kGenQueriesPerBlock;
  const int nq_all = s.n_new * G;
  if (q0 >= nq_all) return;
  const int nq = min(kGenQueriesPerBlock, nq_all - q0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  extern __shared__ float smem[];
  float* k_s = smem;                          // [32][d + 1]
  float* v_s = k_s + kGenKeyTile * (d + 1);   // [32][d]
  float* q_s = v_s + kGenKeyTile * d;         // [16][d], pre-scaled by sm_scale·log2 e

  const T* q = static_cast<const T*>(p.q);
  for (int idx = threadIdx.x; idx < nq * d; idx += blockDim.x) {
    const int qi = idx / d, e = idx - qi * d;
    const int r = (q0 + qi) / G, g = (q0 + qi) % G;
    q_s[idx] = to_f(q[((s.q_row + r) * p.n_q_heads + h * G + g) * d + e]) * p.scale2;
  }

  // This warp's queries, their rows and how many keys each sees.
  int qidx[kGenQueriesPerWarp], visible[kGenQueriesPerWarp];
  float m[kGenQueriesPerWarp], l[kGenQueriesPerWarp], acc[kGenQueriesPerWarp][kGenMaxDimPerLane];
#pragma unroll
  for (int a = 0; a < kGenQueriesPerWarp; ++a) {
    qidx[a] = warp * kGenQueriesPerWarp + a;
    const int r = (q0 + min(qidx[a], nq - 1)) / G;
    visible[a] = qidx[a] < nq ? s.w + r + 1 : 0;
    m[a] = -INFINITY;
    l[a] = 0.0f;
#pragma unroll
    for (int e = 0; e < kGenMaxDimPerLane; ++e) acc[a][e] = 0.0f;
  }
  const int last_row = (q0 + nq - 1) / G;
  const int n_keys = s.w + last_row + 1;  // keys the block's last row sees
  const int k_end = sp.n_split == 1 ? n_keys : min(n_keys, (c + 1) * sp.split);
  if (sp.n_split > 1) {
#pragma unroll
    for (int a = 0; a < kGenQueriesPerWarp; ++a) visible[a] = min(visible[a], k_end);
  }

  for (int kt = sp.n_split == 1 ? 0 : c * sp.split; kt < k_end; kt += kGenKeyTile) {
    __syncthreads();
    load_kv_tile<T>(p, s, h, kt, k_end, k_s, v_s);
    __syncthreads();
    float sc[kGenQueriesPerWarp] = {};
    const float* krow = k_s + lane * (d + 1);
    const float* q0s = q_s + min(qidx[0], nq - 1) * d;
    const float* q1s = q_s + min(qidx[1], nq - 1) * d;
    for (int e = 0; e < d; ++e) {
      const float kv = krow[e];
      sc[0] = fmaf(q0s[e], kv, sc[0]);
      sc[1] = fmaf(q1s[e], kv, sc[1]);
    }
#pragma unroll
    for (int a = 0; a < kGenQueriesPerWarp; ++a) {
      const int j = kt + lane;
      const float sv = j < visible[a] ? sc[a] : -INFINITY;
      const float tile_max = warp_max(sv);
      if (tile_max == -INFINITY) continue;  // warp-uniform: no key of the tile visible
      const float m_new = fmaxf(m[a], tile_max);
      const float corr = exp2f(m[a] - m_new);
      const float pr = exp2f(sv - m_new);
      l[a] = l[a] * corr + warp_sum(pr);
#pragma unroll
      for (int e = 0; e < kGenMaxDimPerLane; ++e) acc[a][e] *= corr;
      for (int kk = 0; kk < kGenKeyTile; ++kk) {
        const float pk = __shfl_sync(0xffffffffu, pr, kk);
        const float* vrow = v_s + kk * d;
#pragma unroll
        for (int e = 0; e < kGenMaxDimPerLane; ++e) {
          const int dd = e * 32 + lane;
          if (dd < d) acc[a][e] = fmaf(pk, vrow[dd], acc[a][e]);
        }
      }
      m[a] = m_new;
    }
  }

#pragma unroll
  for (int a = 0; a < kGenQueriesPerWarp; ++a) {
    if (qidx[a] >= nq) continue;
    const int r = (q0 + qidx[a]) / G, g = (q0 + qidx[a]) % G;
    const int64_t row = (s.q_row + r) * p.n_q_heads + h * G + g;
    if (sp.n_split > 1) {  // a slice the row cannot see leaves m = −∞, l = 0, o = 0
      const int64_t part = (row - static_cast<int64_t>(sp.row0) * p.n_q_heads) * sp.n_split + c;
#pragma unroll
      for (int e = 0; e < kGenMaxDimPerLane; ++e) {
        const int dd = e * 32 + lane;
        if (dd < d) sp.part_o[part * d + dd] = acc[a][e];
      }
      if (lane == 0) {
        sp.part_m[part] = m[a];
        sp.part_l[part] = l[a];
      }
      continue;
    }
    const float inv = 1.0f / l[a];  // every row sees at least key 0: l > 0
#pragma unroll
    for (int e = 0; e < kGenMaxDimPerLane; ++e) {
      const int dd = e * 32 + lane;
      if (dd < d) p.o[row * d + dd] = acc[a][e] * inv;
    }
    if (lane == 0) p.lse[row] = (m[a] + log2f(l[a])) * kLn2;
  }
}

/// Grid (new rows × Hq, 1, sequences): a block per (new row r, query head) of the sequence merges
/// its slices' partials into o and the LSE: with M = max m_c and L = Σ 2^(m_c − M)·l_c,
/// o = Σ 2^(m_c − M) / L · o_c, exactly the softmax over all the row's keys. The warps take the
/// slices in turn (a warp looping over every slice waited out one load per slice: 73 µs for 57
/// slices under ncu).
__global__ void __launch_bounds__(kGenThreads) generic_combine_kernel(KernelArgs p, SeqBatch sb,
                                                                      GenericSplit sp) {
  constexpr int kWarps = kGenThreads / 32;
  __shared__ float w_s[kGenMaxSplits];
  __shared__ float red[kWarps][kGenMaxDimPerLane * 32];
  const WindowSeq s = sb.get(blockIdx.z);
  if (static_cast<int>(blockIdx.x) >= s.n_new * p.n_q_heads) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, d = p.head_dim, n = sp.n_split;
  const int64_t row = s.q_row * p.n_q_heads + blockIdx.x;  // (row s.q_row + r, head) flattened
  const int64_t part0 = (row - static_cast<int64_t>(sp.row0) * p.n_q_heads) * n;
  if (warp == 0) {
    float mx = -INFINITY;
    for (int c = lane; c < n; c += 32) mx = fmaxf(mx, sp.part_m[part0 + c]);
    mx = warp_max(mx);  // finite: slice 0 holds key 0, which every row sees
    float l = 0.0f;
    for (int c = lane; c < n; c += 32) l += sp.part_l[part0 + c] * exp2f(sp.part_m[part0 + c] - mx);
    l = warp_sum(l);
    const float inv_l = 1.0f / l;
    for (int c = lane; c < n; c += 32) w_s[c] = exp2f(sp.part_m[part0 + c] - mx) * inv_l;
    if (lane == 0) p.lse[row] = (mx + log2f(l)) * kLn2;
  }
  __syncthreads();
  float acc[kGenMaxDimPerLane] = {};
  for (int c = warp; c < n; c += kWarps) {
    const float w = w_s[c];
    const float* o_c = sp.part_o + (part0 + c) * d;
#pragma unroll
    for (int e = 0; e < kGenMaxDimPerLane; ++e) {
      const int dd = e * 32 + lane;
      if (dd < d) acc[e] = fmaf(w, o_c[dd], acc[e]);
    }
  }
#pragma unroll
  for (int e = 0; e < kGenMaxDimPerLane; ++e) red[warp][e * 32 + lane] = acc[e];
  __syncthreads();
  for (int dd = threadIdx.x; dd < d; dd += kGenThreads) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) t += red[w][dd];
    p.o[row * d + dd] = t;
  }
}

/// Grid (key tiles of 32, Hkv, sequences). For each key of the tile: a = max over g of
/// (1/n_new) Σ_r exp(s_rg − lse_rg) over the rows r that see it; blends it into the ring's MAW
/// (window entries) or writes it to obs_new (new tokens). Reads the LSE written by the attend pass.
template <typename T>
__global__ void __launch_bounds__(kGenThreads) generic_observe_kernel(KernelArgs p, SeqBatch sb) {
  const WindowSeq s = sb.get(blockIdx.z);
  const int h = blockIdx.y, G = p.group, d = p.head_dim;
  const int n_keys = s.w + s.n_new;
  const int kt = blockIdx.x * kGenKeyTile;
  if (kt >= n_keys) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr int kWarps = kGenThreads / 32;

  extern __shared__ float smem[];
  float* k_s = smem;                                  // [32][d + 1]
  float* q_w = k_s + kGenKeyTile * (d + 1) + warp * d;  // per warp [d]
  float* red = k_s + kGenKeyTile * (d + 1) + kWarps * d;  // [8][32]

  load_kv_tile<T>(p, s, h, kt, n_keys, k_s, nullptr);
  __syncthreads();

  const T* q = static_cast<const T*>(p.q);
  const int j = kt + lane;
  const int r_first = max(0, kt - s.w);  // earlier rows see no key of this tile
  const float* krow = k_s + lane * (d + 1);
  // The softmax weight exp2(s − lse2) of this lane's key in row r of group head g (0 where the
  // row does not see it).
  auto weight = [&](int g, int r) {
    const int64_t row = (s.q_row + r) * p.n_q_heads + h * G + g;
    __syncwarp();
    for (int e = lane; e < d; e += 32) q_w[e] = to_f(q[row * d + e]) * p.scale2;
    __syncwarp();
    float dot[4] = {};  // d is a multiple of 8: four independent chains
    for (int e = 0; e < d; e += 4) {
#pragma unroll
      for (int u = 0; u < 4; ++u) dot[u] = fmaf(q_w[e + u], krow[e + u], dot[u]);
    }
    const float lse2 = p.lse[row] * kLog2e;
    return j < s.w + r + 1 && j < n_keys ? exp2f((dot[0] + dot[1]) + (dot[2] + dot[3]) - lse2) : 0.0f;
  };
  float best = 0.0f;
  if (s.n_new - r_first >= kWarps) {  // many rows (prefill): the warps split each head's rows
    for (int g = 0; g < G; ++g) {
      float sum = 0.0f;
      for (int r = r_first + warp; r < s.n_new; r += kWarps) sum += weight(g, r);
      red[warp * 32 + lane] = sum;
      __syncthreads();
      if (warp == 0) {
        float tot = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) tot += red[w * 32 + lane];
        best = fmaxf(best, tot);
      }
      __syncthreads();
    }
  } else {  // few rows (decode): the warps split the group's heads, each summing all rows
    float own = 0.0f;
    for (int g = warp; g < G; g += kWarps) {
      float sum = 0.0f;
      for (int r = r_first; r < s.n_new; ++r) sum += weight(g, r);
      own = fmaxf(own, sum);
    }
    red[warp * 32 + lane] = own;
    __syncthreads();
    if (warp == 0) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) best = fmaxf(best, red[w * 32 + lane]);
    }
  }
  if (warp == 0 && j < n_keys) {
    const float a = best * (1.0f / static_cast<float>(s.n_new));
    bool in_ring;
    const int64_t row = key_row<T>(s, j, h, p.n_kv_heads, p.capacity, &in_ring);
    if (in_ring) {
      p.ring_maw[row] = maw_blend(p.ring_maw[row], a, p.alpha);
    } else {
      p.obs_new[s.obs_offset + static_cast<int64_t>(h) * s.n_new + (j - s.w)] = a;
    }
  }
}

}  // namespace hgca::gpu::kernels
