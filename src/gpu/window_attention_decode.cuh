// The decode path (every sequence brings one new token), fp16/bf16, head dim 64/128/256, group
// G ≤ 8: flash-decoding. The split kernel takes a slice of one (sequence, KV head)'s keys and all
// G query heads of the group, so each K/V row is read once. It runs on tensor cores (mma.sync
// m16n8k16, the group's heads as the M rows) with K/V tiles staged through shared memory by
// cp.async, for every G: CUDA-core dot products for G heads per key bound a kernel by instruction
// issue, not by HBM, from G = 2 on, and at G = 1 this kernel measured as fast as the CUDA-core
// one it replaced (bench/results/gpu-window). It keeps the slice's scores in shared memory (K pass,
// then V pass: no online rescaling). Two ways to finish:
// - cluster: the slices of one (sequence, KV head) run as one thread-block cluster and exchange
//   their (m, l) and o through distributed shared memory; each block turns its own slice's weights,
//   still in its shared memory, into the MAW observations. One launch, no workspace.
// - split + combine, for more slices than a cluster holds: the slices leave their scores (base 2)
//   and partial states in the workspace, and the combine kernel merges them into o and LSE and
//   turns the stored scores into the MAW observation of every key, with no second read of K.
#pragma once

#include <cooperative_groups.h>

#include <type_traits>

#include "gpu/window_attention_common.cuh"

namespace hgca::gpu::kernels {

inline constexpr int kDecThreads = 128;  // 4 warps
inline constexpr int kDecWarps = kDecThreads / 32;
inline constexpr int kCombineThreads = 256;
/// Most keys one slice of split + combine takes: bounds the split kernel's shared memory (G 8
/// slices of 1536 keys still leave two blocks per SM).
inline constexpr int kMaxSplitKeys = 1536;
/// Most keys one slice of the cluster path may take. A group size's own bound (decode_setup) is the
/// longest slice that keeps as many blocks per SM as kMaxSplitKeys, up to this: G ≤ 4 slices of
/// 3072 keys still leave two blocks per SM, so 8 of them hold a 16K window in one cluster.
inline constexpr int kMaxClusterKeys = 3072;
/// Most slices one cluster takes (the H100/H200's non-portable cluster size).
inline constexpr int kMaxClusterSlices = 16;
inline constexpr int kTileKeys = 64;  // keys per staged tile: 16 per warp (an mma's n or k)

/// Where one decode launch keeps its intermediates in the caller's workspace.
struct DecodeLayout {
  int32_t split = 0;       ///< keys per slice
  int32_t n_split = 0;     ///< slices of the longest sequence (grid x)
  int64_t sc_stride = 0;   ///< scores row length (≥ longest key count)
  float* part_m = nullptr;  ///< [b, Hkv, n_split, G] slice max (base 2)
  float* part_l = nullptr;  ///< [b, Hkv, n_split, G] Σ exp2(s − m) over the slice
  float* part_o = nullptr;  ///< [b, Hkv, n_split, G, D] Σ exp2(s − m)·v over the slice
  float* scores = nullptr;  ///< [b, Hq, sc_stride] q·k·sm_scale·log2 e
  int32_t tail_launch = 0;  ///< cluster path: 1 = a tail launch follows (PDL), 2 = this is it
};

/// The slice's statistics, one warp per head of the group: m = the max of the scores of keys
/// [k0, k0 + n) and l = Σ exp2(s − m) into m_out[g], l_out[g]; the head's row of `sc` (`sc_row`
/// floats apart) becomes exp2(s − m) over [0, n) and 0 over [n, n_pad). kStoreScores: the scores
/// also go out to the workspace, for the combine.
template <bool kStoreScores>
__device__ __forceinline__ void slice_stats(const KernelArgs& p, const DecodeLayout& lay, float* sc,
                                            int sc_row, int n, int n_pad, int k0, float* m_out,
                                            float* l_out) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, G = p.group;
  // The combine reads the scores back soon, while K/V stream through L2 marked evict-first: ask L2
  // to keep them (the workspace is reused by every call, so they need not reach HBM at all).
  uint64_t evict_last = 0;
  if constexpr (kStoreScores)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(evict_last));
  for (int g = warp; g < G; g += kDecWarps) {
    float* row = sc + g * sc_row;
    float m = -INFINITY;
    for (int jj = lane; jj < n; jj += 32) {
      const float v = row[jj];
      if constexpr (kStoreScores) {
        float* out = lay.scores +
                     (static_cast<int64_t>(blockIdx.z) * p.n_q_heads + blockIdx.y * G + g) *
                         lay.sc_stride + k0;
        asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(out + jj), "f"(v),
                     "l"(evict_last)
                     : "memory");
      }
      m = fmaxf(m, v);
    }
    m = warp_max(m);
    float l = 0.0f;
    for (int jj = lane; jj < n_pad; jj += 32) {
      const float e = jj < n ? exp2f(row[jj] - m) : 0.0f;
      row[jj] = e;
      l += e;
    }
    l = warp_sum(l);
    if (lane == 0) {
      m_out[g] = m;
      l_out[g] = l;
    }
  }
}

/// The slice's Σ exp2(s − m)·v: the warps' partial rows `red` [warps][G·D] added into `out`
/// (which may be red's first row: each element is read and written by one thread).
__device__ __forceinline__ void sum_warp_rows(const float* red, float* out, int gd) {
  for (int idx = threadIdx.x; idx < gd; idx += kDecThreads) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < kDecWarps; ++w) t += red[w * gd + idx];
    out[idx] = t;
  }
}

/// The observations a(j) of keys [k0, k1) (at most kMaxSplitKeys), kThreads threads a key each:
/// blended into the ring's MAW for window entries, into obs_new for the new token (n_new = 1:
/// new token 0 of KV head h). Every load (the MAW and what a(j) reads) is issued before the first
/// store: a loop of load, blend, store would wait out one load latency per key (the stores may
/// alias the next loads, as far as the compiler knows). `obs` is either a(j), or weight(g, j) of
/// head g of the group, a = max over g: then the loop over the heads is the outer one, so each
/// thread's keys are read together, head by head (the cluster path's weights, in shared memory;
/// the combine keeps a(j): the two loops' registers made it spill).
template <int kThreads, typename Observation>
__device__ __forceinline__ void record_observations(const KernelArgs& p, const WindowSeq& s, int h,
                                                    int k0, int k1, const Observation& obs) {
  constexpr int kPer = (kMaxSplitKeys + kThreads - 1) / kThreads;
  constexpr bool kByHead = std::is_invocable_v<const Observation&, int, int>;
  const int64_t ring = (static_cast<int64_t>(s.ring) * p.n_kv_heads + h) * p.capacity;
  int slot[kPer];
  float maw[kPer], a[kPer];
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    const int j = k0 + u * kThreads + static_cast<int>(threadIdx.x);
    slot[u] = s.tail + j;
    if (slot[u] >= p.capacity) slot[u] -= p.capacity;
    maw[u] = j < k1 && j < s.w ? p.ring_maw[ring + slot[u]] : 0.0f;
    if constexpr (kByHead) a[u] = 0.0f;
    else a[u] = j < k1 ? obs(j) : 0.0f;
  }
  if constexpr (kByHead) {
    for (int g = 0; g < p.group; ++g) {
#pragma unroll
      for (int u = 0; u < kPer; ++u) {
        const int j = k0 + u * kThreads + static_cast<int>(threadIdx.x);
        if (j < k1) a[u] = fmaxf(a[u], obs(g, j));
      }
    }
  }
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    const int j = k0 + u * kThreads + static_cast<int>(threadIdx.x);
    if (j < k1 && j < s.w) p.ring_maw[ring + slot[u]] = maw_blend(maw[u], a[u], p.alpha);
    else if (j < k1) p.obs_new[s.obs_offset + h] = a[u];
  }
}

/// The cluster path's end, after the block's o rows are summed into `o_slice` [G·D] and its
/// (m, l) are in slice_m / slice_l; `scratch` holds 2·kMaxClusterSlices·8 floats of the block's
/// own. The cluster's blocks are the slices of one (sequence, KV head) (rank = slice). Every block reads all slices' (m, l) through distributed shared memory and
/// merges them into the LSE, sums its share of o over the slices, and turns its own slice's
/// weights exp2(s − m) (`sc`, still in its shared memory) into the observations of its keys.
template <int D>
__device__ __forceinline__ void cluster_finish(const KernelArgs& p, const WindowSeq& s, int h,
                                               int n, int k0, const float* o_slice,
                                               const float* sc, int sc_row,
                                               const float* slice_m, const float* slice_l,
                                               float* scratch) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int G = p.group, gd = G * D;
  const int n_slices = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  // Slice x's m, then its weight exp2(m_x − M) / L, of head g at wgt[x·8 + g]; its l at l_x.
  float* const wgt = scratch;
  float* const l_x = scratch + kMaxClusterSlices * 8;
  __shared__ float lse2_s[8], own_s[8];  // the LSE (base 2); exp2(m − lse2) of this slice
  cluster.sync();  // every slice's (m, l) and o are in its shared memory
  for (int t = threadIdx.x; t < n_slices * G; t += kDecThreads) {
    const int x = t / G, g = t % G;
    wgt[x * 8 + g] = *cluster.map_shared_rank(slice_m + g, x);
    l_x[x * 8 + g] = *cluster.map_shared_rank(slice_l + g, x);
  }
  __syncthreads();
  if (threadIdx.x < G) {
    const int g = threadIdx.x;
    float m = -INFINITY;  // finite: some slice holds the new token
    for (int x = 0; x < n_slices; ++x) m = fmaxf(m, wgt[x * 8 + g]);
    float l = 0.0f;
    for (int x = 0; x < n_slices; ++x) l += l_x[x * 8 + g] * exp2f(wgt[x * 8 + g] - m);
    const float inv_l = 1.0f / l, lse2 = m + log2f(l);
    for (int x = 0; x < n_slices; ++x) wgt[x * 8 + g] = exp2f(wgt[x * 8 + g] - m) * inv_l;
    lse2_s[g] = lse2;
    own_s[g] = exp2f(slice_m[g] - lse2);
  }
  __syncthreads();

  // o: this block's share of the group's G·D elements, 4 at a time (a head's D is a multiple of 4).
  const int64_t q_head0 = s.q_row * p.n_q_heads + static_cast<int64_t>(h) * G;
  for (int i = (rank * kDecThreads + threadIdx.x) * 4; i < gd; i += n_slices * kDecThreads * 4) {
    const int g = i / D;
    float4 t = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int x = 0; x < n_slices; ++x) {
      const float4 v = *reinterpret_cast<const float4*>(cluster.map_shared_rank(o_slice + i, x));
      const float w = wgt[x * 8 + g];
      t.x = fmaf(v.x, w, t.x);
      t.y = fmaf(v.y, w, t.y);
      t.z = fmaf(v.z, w, t.z);
      t.w = fmaf(v.w, w, t.w);
    }
    float* out = p.o + q_head0 * D + i;  // p.o need not be 16-byte aligned
    out[0] = t.x;
    out[1] = t.y;
    out[2] = t.z;
    out[3] = t.w;
  }
  if (rank == 0 && threadIdx.x < G) p.lse[q_head0 + threadIdx.x] = lse2_s[threadIdx.x] * kLn2;
  // Done reading the other blocks' shared memory (every value read is used above). Relaxed: the
  // default (release) first waits for this block's stores of o to reach memory (MEMBAR.ALL.GPU),
  // and every block's barrier_wait below waits for this arrival (bench/results/gpu-window/finish).
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");

  // Observations of this slice's keys: a = max over the group of exp2(s − m)·exp2(m − lse2), in
  // runs of kMaxSplitKeys (a slice may be up to kMaxClusterKeys long).
  for (int r0 = k0; r0 < k0 + n; r0 += kMaxSplitKeys)
    record_observations<kDecThreads>(p, s, h, r0, min(r0 + kMaxSplitKeys, k0 + n),
                                     [&](int g, int j) { return sc[g * sc_row + j - k0] * own_s[g]; });
  cluster.barrier_wait();  // no block leaves while another may still read its shared memory
}

/// Tile stages of the pipeline: 64 KB of K/V per block in flight or in use (8, 4, 2 for D 64,
/// 128, 256), so that two blocks per SM keep about 100 KB of loads in flight.
__host__ __device__ constexpr int tile_stages(int d) {
  return 65536 / (kTileKeys * d * 2) > 2 ? 65536 / (kTileKeys * d * 2) : 2;
}
/// Floats between the heads' rows of the slice scores in shared memory: the split rounded up to
/// whole tiles, plus 8 so that the 8 heads' rows start 8 banks apart (conflict-free fragments).
__host__ __device__ constexpr int scores_row(int split) {
  return (split + kTileKeys - 1) / kTileKeys * kTileKeys + 8;
}
/// Dynamic shared memory of decode_slice (both decode kernels): the tile stages, then the slice's
/// scores of G heads.
inline std::size_t decode_split_smem(int split, int g, int d) {
  return static_cast<std::size_t>(tile_stages(d)) * kTileKeys * d * 2 +
         sizeof(float) * static_cast<std::size_t>(g) * scores_row(split);
}

/// 16-byte cp.async global → shared, zero-filled past `src_bytes` (0: nothing is read), with an
/// L2 eviction policy.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes,
                                           uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst),
               "l"(src), "r"(src_bytes), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
/// Four 8×8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i. TRANS: transposed.
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}
/// d += a·b, m16n8k16, fp32 accumulators, T = __half or __nv_bfloat16 operands.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// The residual p − hi of a weight is scaled by this before rounding to T (and the lo rows of o
/// by its inverse): fp16's exponent range would flush small residuals; bf16's would not.
template <typename T>
inline constexpr float kLoScale = std::is_same_v<T, __half> ? 2048.0f : 1.0f;

/// Two fp32 weights as T pairs hi = T(p) and lo = T((p − hi)·kLoScale): hi + lo/kLoScale keeps
/// about 17 bits of p where T alone keeps 8 (bf16) or 11 (fp16), so o meets the fp32 tolerances.
template <typename T>
__device__ __forceinline__ void split_weights(float2 p, uint32_t* hi, uint32_t* lo) {
  constexpr float s = kLoScale<T>;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(p.x, p.y);
    const float2 hf = __bfloat1622float2(h);
    const __nv_bfloat162 l = __floats2bfloat162_rn((p.x - hf.x) * s, (p.y - hf.y) * s);
    *hi = *reinterpret_cast<const uint32_t*>(&h);
    *lo = *reinterpret_cast<const uint32_t*>(&l);
  } else {
    const __half2 h = __floats2half2_rn(p.x, p.y);
    const float2 hf = __half22float2(h);
    const __half2 l = __floats2half2_rn((p.x - hf.x) * s, (p.y - hf.y) * s);
    *hi = *reinterpret_cast<const uint32_t*>(&h);
    *lo = *reinterpret_cast<const uint32_t*>(&l);
  }
}

/// Grid (slices, Hkv, sequences), 1 ≤ G ≤ 8. The group's query heads are rows 0..G−1 of the mma's
/// M = 16. Scores S = Q·Kᵀ: each warp takes 16 keys of every 64-key tile (two n8 tiles), K from
/// shared memory by ldmatrix. Output O = P·V: rows 0..7 of P carry the weights rounded to T (hi)
/// and rows 8..15 their residuals (lo), so one mma keeps fp32-like weights and every thread holds
/// both halves of its head's sum. K then V tiles of the slice stream through one cp.async ring of
/// tile_stages(D) stages; rows are 16-byte chunks XOR-swizzled by row mod 8 (conflict-free ldmatrix).
/// kCluster: launched in clusters of all the slices of a (sequence, KV head), it finishes the call
/// itself (cluster_finish); else it leaves its partial state and scores for the combine.
template <typename T, int D, bool kCluster>
__device__ __forceinline__ void decode_slice(const KernelArgs& p, const SeqBatch& sb,
                                             const DecodeLayout& lay) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per key row
  constexpr int kTileBytes = kTileKeys * D * 2;
  constexpr int kStages = tile_stages(D);
  constexpr int kRowsPerPass = kDecThreads / kChunks;  // rows the block's threads copy at once
  constexpr int kLoads = kTileKeys / kRowsPerPass;  // cp.async per thread per tile
  static_assert(kLoads * kRowsPerPass == kTileKeys, "whole tiles per block");
  static_assert(kTileKeys == 16 * kDecWarps, "16 keys per warp per tile");
  static_assert(kStages * kTileBytes / 4 >= kDecWarps * 8 * D + 2 * kMaxClusterSlices * 8,
                "the stages hold the warps' rows of o and cluster_finish's scratch");
  // The combine, or the cluster path's tail launch, may take slots as this launch's blocks end.
  if (!kCluster || lay.tail_launch == 1) asm volatile("griddepcontrol.launch_dependents;");

  const WindowSeq s = sb.get(blockIdx.z);
  const int h = blockIdx.y, c = blockIdx.x, G = p.group;
  const int n_keys = s.w + 1;
  int k0, n;  // the slice: keys [k0, k0 + n)
  if constexpr (kCluster) {
    // The sequence's tiles spread evenly over the cluster, so that no block of it idles at the
    // barrier (W + 1 keys would leave a last slice of one tile). A sequence with fewer tiles than
    // slices leaves some empty: they still take part in the barriers (m = −inf, l = 0, o = 0).
    const int tiles = (n_keys + kTileKeys - 1) / kTileKeys;
    k0 = c * tiles / lay.n_split * kTileKeys;
    n = max(0, min((c + 1) * tiles / lay.n_split * kTileKeys, n_keys) - k0);
  } else {
    k0 = c * lay.split;
    if (k0 >= n_keys) return;  // past a shorter sequence's keys: the combine ignores it
    n = min(lay.split, n_keys - k0);
  }
  const int n_tiles = (n + kTileKeys - 1) / kTileKeys;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, tig = lane & 3;  // fragment row (query head) and column pair

  extern __shared__ float smem[];
  const uint32_t stages = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int sc_row = scores_row(lay.split);
  float* sc = smem + kStages * kTileBytes / 4;  // [G][sc_row] scores, then weights

  const int64_t ring_off = (static_cast<int64_t>(s.ring) * p.n_kv_heads + h) * p.capacity * D;
  const int64_t new_off = (s.q_row * p.n_kv_heads + h) * D;
  uint64_t evict_first;  // K/V are read once: let them leave L2 before the scores and MAW
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(evict_first));
  // This thread copies chunk ch0 of rows u·kRowsPerPass + r0 of every tile.
  const int r0 = threadIdx.x / kChunks, ch0 = threadIdx.x % kChunks;
  // Load i of the slice: K tile i for i < n_tiles, else V tile i − n_tiles. Keys past the slice
  // are zero-filled (a V row of garbage could hold NaN, and 0·NaN is NaN).
  auto load_tile = [&](int i) {
    const bool is_v = i >= n_tiles;
    const int jt = (is_v ? i - n_tiles : i) * kTileKeys;  // the tile's first key in the slice
    const T* ring = static_cast<const T*>(is_v ? p.ring_v : p.ring_k) + ring_off;
    const T* fresh = static_cast<const T*>(is_v ? p.v_new : p.k_new) + new_off;
    const uint32_t dst = stages + (i % kStages) * kTileBytes;
    int slot = s.tail + k0 + jt;  // k0 + jt ≤ w ≤ capacity: one subtraction wraps it
    if (slot >= p.capacity) slot -= p.capacity;
    if (jt + kTileKeys <= n && k0 + jt + kTileKeys <= s.w &&
        slot + kTileKeys <= p.capacity) {
      // The usual tile: ring rows in a row, so one base address and fixed strides.
      const T* src = ring + static_cast<int64_t>(slot + r0) * D + ch0 * 8;
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const int r = u * kRowsPerPass + r0;
        cp_async16(dst + r * (D * 2) + ((ch0 ^ (r & 7)) << 4), src + u * kRowsPerPass * D, 16,
                   evict_first);
      }
      return;
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {  // past the slice, the ring's wrap or the new token
      const int r = u * kRowsPerPass + r0;
      const int jj = jt + r;
      const T* src = fresh;  // a valid address even when nothing is read
      int bytes = 0;
      if (jj < n) {
        const int j = k0 + jj;
        if (j < s.w) {
          int sl = s.tail + j;
          if (sl >= p.capacity) sl -= p.capacity;
          src = ring + static_cast<int64_t>(sl) * D;
        }
        src += ch0 * 8;
        bytes = 16;
      }
      cp_async16(dst + r * (D * 2) + ((ch0 ^ (r & 7)) << 4), src, bytes, evict_first);
    }
  };

  const int n_loads = 2 * n_tiles;
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (i < n_loads) load_tile(i);
    cp_async_commit();
  }
  // Waits for load i, refills the stage every warp has finished with, returns load i's stage.
  auto next_stage = [&](int i) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // load i has landed, and every warp is done with stage (i − 1): refill it
    if (i + kStages - 1 < n_loads) load_tile(i + kStages - 1);
    cp_async_commit();
    return stages + (i % kStages) * kTileBytes;
  };
  // ldmatrix row of this lane: matrix lane / 8, its row lane % 8 (= the row's swizzle).
  const int lm = lane >> 3, lr = lane & 7;
  // The slice's (m, l) per head: the cluster's blocks read them from shared memory.
  __shared__ float slice_m_s[8], slice_l_s[8];
  const int64_t part = ((static_cast<int64_t>(blockIdx.z) * p.n_kv_heads + h) * lay.n_split + c) * G;
  float* const slice_m = kCluster ? slice_m_s : lay.part_m + part;
  float* const slice_l = kCluster ? slice_l_s : lay.part_l + part;

  // ---- K pass: scores of the warp's keys 16·warp + [0, 16) of every tile ----
  {
    // Q as the A fragments of S = Q·Kᵀ: row gid = head gid of the group; rows ≥ G and the lo
    // rows 8..15 (a1, a3) are zero. (Sᵀ = K·Qᵀ, one mma per k-step with no register moves, was no
    // faster and took the split kernel to 168 registers, 5.7 % slower: gpu-window/kpass.)
    uint32_t qa[D / 16][2];
    const T* qp = static_cast<const T*>(p.q) + (s.q_row * p.n_q_heads + h * G + gid) * D + 2 * tig;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      qa[kk][0] = gid < G ? __ldg(reinterpret_cast<const unsigned int*>(qp + kk * 16)) : 0u;
      qa[kk][1] = gid < G ? __ldg(reinterpret_cast<const unsigned int*>(qp + kk * 16 + 8)) : 0u;
    }
    // Matrices: keys +0..7 dims lo/hi half of the k-step, keys +8..15 the same (b0, b1 of each n8).
    const int r = warp * 16 + (lm >> 1) * 8 + lr;
    for (int t = 0; t < n_tiles; ++t) {
      const uint32_t tile = next_stage(t);
      float sacc[2][4] = {};
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t b[4];
        ldmatrix_x4<false>(b, tile + r * (D * 2) + (((2 * kk + (lm & 1)) ^ lr) << 4));
        mma_16816<T>(sacc[0], qa[kk][0], 0u, qa[kk][1], 0u, b[0], b[1]);
        mma_16816<T>(sacc[1], qa[kk][0], 0u, qa[kk][1], 0u, b[2], b[3]);
      }
      if (gid < G) {
        float* row = sc + gid * sc_row + t * kTileKeys + warp * 16 + 2 * tig;
#pragma unroll
        for (int nn = 0; nn < 2; ++nn)
          *reinterpret_cast<float2*>(row + nn * 8) =
              make_float2(sacc[nn][0] * p.scale2, sacc[nn][1] * p.scale2);
      }
    }
  }

  // ---- V pass: O += P·V over the warp's keys of every tile ----
  float acc[D / 8][4];  // O, n8 tile of dims: c0, c1 hi rows (head gid), c2, c3 its lo rows
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.0f;
  {
    // Matrices (transposed): keys +0..7 and +8..15 of dims 16·dp + 0..7, then of + 8..15.
    const int r = warp * 16 + (lm & 1) * 8 + lr;
    for (int t = 0; t < n_tiles; ++t) {
      const uint32_t tile = next_stage(n_tiles + t);
      if (t == 0) {  // every score of the slice is in (barrier above): weights for V
        slice_stats<!kCluster>(p, lay, sc, sc_row, n, n_tiles * kTileKeys, k0, slice_m, slice_l);
        __syncthreads();
      }
      uint32_t a[4] = {0u, 0u, 0u, 0u};
      if (gid < G) {
        const float* row = sc + gid * sc_row + t * kTileKeys + warp * 16 + 2 * tig;
        split_weights<T>(*reinterpret_cast<const float2*>(row), &a[0], &a[1]);
        split_weights<T>(*reinterpret_cast<const float2*>(row + 8), &a[2], &a[3]);
      }
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t b[4];
        ldmatrix_x4<true>(b, tile + r * (D * 2) + (((2 * dp + (lm >> 1)) ^ lr) << 4));
        mma_16816<T>(acc[2 * dp], a[0], a[1], a[2], a[3], b[0], b[1]);
        mma_16816<T>(acc[2 * dp + 1], a[0], a[1], a[2], a[3], b[2], b[3]);
      }
    }
  }
  if (n_tiles == 0)  // an empty slice (cluster path): m = −inf, l = 0
    slice_stats<!kCluster>(p, lay, sc, sc_row, 0, 0, k0, slice_m, slice_l);
  cp_async_wait<0>();  // only empty groups remain; the stages become the warps' rows of o
  __syncthreads();
  float* red = smem;  // [warps][G][D]
  if (gid < G) {
    constexpr float inv_lo = 1.0f / kLoScale<T>;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      *reinterpret_cast<float2*>(red + (warp * G + gid) * D + nt * 8 + 2 * tig) =
          make_float2(acc[nt][0] + acc[nt][2] * inv_lo, acc[nt][1] + acc[nt][3] * inv_lo);
  }
  __syncthreads();
  if constexpr (kCluster) {
    sum_warp_rows(red, red, G * D);  // the slice's o in red's first row
    // The stages hold the warps' rows (≤ 32 KB of 64): the rest is the finish's scratch.
    cluster_finish<D>(p, s, h, n, k0, red, sc, sc_row, slice_m, slice_l, red + kDecWarps * G * D);
    // A tail launch ends only after the launch before it (whose sequences it does not touch), so
    // that the stream's later work sees both complete.
    if (lay.tail_launch == 2) asm volatile("griddepcontrol.wait;" ::: "memory");
  } else {
    sum_warp_rows(red, lay.part_o + part * D, G * D);
  }
}

/// decode_slice for split + combine.
template <typename T, int D>
__global__ void __launch_bounds__(kDecThreads, D == 256 ? 2 : 3)
    decode_split_kernel(KernelArgs p, SeqBatch sb, DecodeLayout lay) {
  decode_slice<T, D, false>(p, sb, lay);
}

/// decode_slice for the cluster path. __maxnreg__ rather than __launch_bounds__ (the same cap of
/// 168 registers, still 3 blocks per SM where shared memory allows): under __launch_bounds__,
/// ptxas held this kernel to 131 registers by recomputing the V pass's loop-invariant addresses
/// (ldmatrix swizzles, the shared window base, load_tile's thread offsets) in every tile, 729
/// instead of 633 instructions per iteration (bf16 D 128). With 152 registers it keeps them:
/// 1.2 % faster at G 4 batch 16 W 16384, 2 % at G 8 (bench/results/gpu-window/maxnreg). The
/// split kernel under __maxnreg__ took 168 registers and was 5 % slower at G 8 W 4096.
template <typename T, int D>
__global__ void __maxnreg__(D == 256 ? 255 : 168)
    decode_cluster_kernel(KernelArgs p, SeqBatch sb, DecodeLayout lay) {
  decode_slice<T, D, true>(p, sb, lay);
}

/// Grid (slices, Hkv, sequences). Every block merges the slices' (m, l) of its (sequence, KV
/// head) into the LSE; block x then writes its share of o (all its threads summing over the
/// slices in parallel) and the observations of slice x's keys. (Loading the slice's scores before
/// the statistics, with registers for G scores per key, measured slower for G ≥ 2: occupancy
/// matters more here than loads in flight per thread.)
__global__ void __launch_bounds__(kCombineThreads) decode_combine_kernel(KernelArgs p, SeqBatch sb,
                                                                         DecodeLayout lay) {
  // Launched as a programmatic dependent of the split kernel: wait for its results to be visible.
  asm volatile("griddepcontrol.wait;" ::: "memory");
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
  record_observations<kCombineThreads>(p, s, h, k0, k1, [&](int j) {
    float a = 0.0f;
    for (int g = 0; g < G; ++g) a = fmaxf(a, exp2f(sc[g * lay.sc_stride + j] - lse2_s[g]));
    return a;
  });
}

}  // namespace hgca::gpu::kernels
