// The GPU sparse attention's kernels and launcher. The attend kernel takes one tile of an item's
// (row, head) pairs and one chunk of its keys per block: a K pass puts the chunk's scores in shared
// memory (each K row read once, 16 bytes per lane, for every pair of the tile), a V pass adds
// exp2(s − m)·v, with the running max and sum carried across sub-chunks of what fits in shared
// memory (a sub-chunk ends early at a segment's end). A block that covers all of its item's keys
// writes o and LSE; otherwise it leaves a partial state and the combine kernel merges an item's
// chunks exactly by LSE.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gpu/attention_common.cuh"
#include "gpu/sparse_attention.hpp"

namespace hgca::gpu {
namespace kernels {

inline constexpr int kSparseThreads = 128;  // 4 warps
inline constexpr int kSparseWarps = kSparseThreads / 32;
inline constexpr int kCombineWarps = 8;     // one (row, head) pair each

/// What both kernels get (by value).
struct SparseArgs {
  const SparseAttentionItem* items;
  SparseAttentionPlan plan;
  float2* part_ml;  ///< per partial slot: (max, Σ exp2(s − max)), base 2
  float* part_o;    ///< per partial slot: head_dim values of Σ exp2(s − max)·v
  int32_t group, head_dim;
  float scale2;  ///< sm_scale × log2 e
};

/// Shared memory of the attend kernel, in floats: the scores of a sub-chunk [TP][sub_keys], the
/// warps' outputs [warps][TP][DP] (carried across sub-chunks, so that the output registers are dead
/// during the K pass), and the tile's queries [TP][DP] (so that the query registers are dead during
/// the V pass). Sub-chunks hold 8 KB of scores, less where that would pass 44 KB in all (48 KB is
/// the default limit, static shared memory included).
__host__ __device__ constexpr int sparse_sub_keys(int tp, int dp) {
  const int fit = (11 * 1024 - 5 * tp * dp) / tp / 64 * 64;
  return fit < 2048 / tp ? fit : 2048 / tp;
}
constexpr std::size_t sparse_attend_smem(int tp, int dp) {
  return sizeof(float) * static_cast<std::size_t>(tp * sparse_sub_keys(tp, dp) + (kSparseWarps + 1) * tp * dp);
}

/// The 16-byte words holding a lane's 8 elements of a row.
template <typename T>
inline constexpr int kRowWords = sizeof(T) == 4 ? 2 : 1;
template <typename T>
struct RowBits {
  uint4 w[kRowWords<T>];
};

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/// Loads a lane's 8 elements at p: 16-byte streaming loads when the item's rows are aligned,
/// element loads otherwise (any element-aligned pointer works).
template <typename T>
__device__ __forceinline__ void load_row8(const T* p, bool vec, RowBits<T>& raw) {
  uint4* r = raw.w;
  if (vec) {
    r[0] = load_stream16(p);
    if constexpr (kRowWords<T> == 2) r[1] = load_stream16(p + 4);
  } else if constexpr (kRowWords<T> == 2) {
    const auto* w = reinterpret_cast<const uint32_t*>(p);
    r[0] = make_uint4(w[0], w[1], w[2], w[3]);
    r[1] = make_uint4(w[4], w[5], w[6], w[7]);
  } else {
    const auto* h = reinterpret_cast<const uint16_t*>(p);
    auto pack = [&](int i) { return static_cast<uint32_t>(h[i]) | static_cast<uint32_t>(h[i + 1]) << 16; };
    r[0] = make_uint4(pack(0), pack(2), pack(4), pack(6));
  }
}

template <typename T>
__device__ __forceinline__ void unpack_row8(const RowBits<T>& raw, float (&f)[8]) {
  const uint4* r = raw.w;
  if constexpr (kRowWords<T> == 2) {
    f[0] = __uint_as_float(r[0].x), f[1] = __uint_as_float(r[0].y);
    f[2] = __uint_as_float(r[0].z), f[3] = __uint_as_float(r[0].w);
    f[4] = __uint_as_float(r[1].x), f[5] = __uint_as_float(r[1].y);
    f[6] = __uint_as_float(r[1].z), f[7] = __uint_as_float(r[1].w);
  } else {
    unpack8<T>(r[0], f);
  }
}

/// Item z, read once per block as 8-byte words (the items may be in mapped host memory) into
/// shared memory, where its fields stay (out of registers) for the block's threads. A barrier.
__device__ __forceinline__ const SparseAttentionItem& load_item(const SparseAttentionItem* items, int64_t z) {
  constexpr int kWords = sizeof(SparseAttentionItem) / 8;
  static_assert(sizeof(SparseAttentionItem) % 8 == 0 && std::is_trivially_copyable_v<SparseAttentionItem>);
  __shared__ uint64_t words[kWords];
  if (threadIdx.x < kWords) words[threadIdx.x] = reinterpret_cast<const uint64_t*>(items + z)[threadIdx.x];
  __syncthreads();
  return *reinterpret_cast<const SparseAttentionItem*>(words);
}

/// Grid (items, tiles, kv_splits). Per thread, the K pass holds the queries of its 8 dims for the
/// tile's pairs and the V pass the matching outputs, never both: sparse_blocks_per_sm(TP) blocks fit.
template <typename T, int DP, int TP>
__global__ void __launch_bounds__(kSparseThreads, sparse_blocks_per_sm(TP)) sparse_attend_kernel(SparseArgs a) {
  constexpr int kTpk = DP / 8;              // lanes per key row, 8 elements each
  constexpr int kKpw = 32 / kTpk;           // keys per warp per load
  constexpr int kKpb = kSparseWarps * kKpw; // keys per block per load
  constexpr int kUnroll = 4 / kRowWords<T>; // loads per thread per step; two steps in flight
  constexpr int kStep = kKpb * kUnroll;
  constexpr int kSub = sparse_sub_keys(TP, DP);
  static_assert(kSub >= kStep && kSub % 64 == 0, "a sub-chunk holds whole load steps");

  const int64_t z = blockIdx.x;
  const SparseAttentionItem& it = load_item(a.items, z);
  const int G = a.group, D = a.head_dim;
  const int64_t n = it.n > 0 ? it.n : 0;
  const int64_t pairs = it.n_rows > 0 ? int64_t{it.n_rows} * G : 0;
  const SparseKeyChunks ch = sparse_key_chunks(n, pairs, a.plan);
  const int c = blockIdx.z;
  if (c >= ch.count) return;  // block-uniform
  const int64_t k0 = c * ch.size, k1 = min64(n, k0 + ch.size);
  const bool partial = ch.count > 1;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kg = lane / kTpk, dl = lane % kTpk;
  const int key_lane = warp * kKpw + kg;  // this thread's key within a load step
  const bool lane_on = dl * 8 < D;        // lanes past head_dim (D < DP) load and add nothing

  extern __shared__ float smem[];
  float* sc = smem;                               // [TP][kSub]: scores, then exp2(s − m)
  float* red = sc + TP * kSub;                    // [warps][TP][DP]: each warp's Σ exp2(s − m)·v
  float* q_s = red + kSparseWarps * TP * DP;      // [TP][DP]: queries × sm_scale × log2 e
  float* my_red = red + warp * TP * DP + dl * 8;  // this lane's 8 dims of pair 0
  const float* my_q = q_s + dl * 8;
  __shared__ float m_s[TP], l_s[TP], corr_s[TP];
  // The segment of the last sub-chunk: its table entry is read once, not once per sub-chunk (the
  // runtime's tables are in host memory, each read a trip over the link).
  int32_t seg_at = -1;
  kvmgr::KvSegment seg;

  for (int64_t tile = blockIdx.y; tile * TP < pairs; tile += gridDim.y) {
    const int64_t p0 = tile * TP;
    const int tp = static_cast<int>(min64(TP, pairs - p0));  // pairs of the tile in use
    // Pairs past tp and dims past D get query 0: their scores are 0 and their results dropped.
    for (int idx = threadIdx.x; idx < TP * DP; idx += kSparseThreads) {
      const int g = idx / DP, e = idx - g * DP;
      const int64_t pr = p0 + g;
      q_s[idx] = g < tp && e < D
                     ? to_f(static_cast<const T*>(it.q)[(pr / G) * it.q_row_stride + (pr % G) * D + e]) * a.scale2
                     : 0.0f;
    }
    if (threadIdx.x < TP) {
      m_s[threadIdx.x] = -INFINITY;
      l_s[threadIdx.x] = 0.0f;
    }
    __syncthreads();

    for (int64_t s0 = k0; s0 < k1;) {
      // The sub-chunk's rows: in one run, or in the segment holding key s0, where it ends early.
      const T* kr = static_cast<const T*>(it.k);
      const T* vr = static_cast<const T*>(it.v);
      int64_t run_first = 0, run_end = k1;
      if (it.segments) {
        const int32_t sg = kvmgr::context_segment_of(s0, it.segment_rows);
        if (sg != seg_at) {
          seg = it.segments[sg];
          seg_at = sg;
        }
        kr = static_cast<const T*>(seg.k);
        vr = static_cast<const T*>(seg.v);
        run_first = kvmgr::context_segment_first(sg, it.segment_rows);
        run_end = min64(k1, kvmgr::context_segment_end(sg, it.segment_rows));
      }
      const int ns = static_cast<int>(min64(kSub, run_end - s0));
      // 16-byte loads where the run's K and V allow them (each segment has its own alignment).
      const bool vec = ((reinterpret_cast<uintptr_t>(kr) | reinterpret_cast<uintptr_t>(vr)) & 15) == 0;
      const T* kb = kr + (s0 - run_first) * D + dl * 8;
      const T* vb = vr + (s0 - run_first) * D + dl * 8;
      // Loads this thread's 16 bytes (or 32) of the keys of step `base` (zeros past the sub-chunk).
      auto load_step = [&](const T* rows, int base, RowBits<T> (&raw)[kUnroll]) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int jj = base + u * kKpb + key_lane;
#pragma unroll
          for (int w = 0; w < kRowWords<T>; ++w) raw[u].w[w] = make_uint4(0, 0, 0, 0);
          if (jj < ns && lane_on) load_row8<T>(rows + static_cast<int64_t>(jj) * D, vec, raw[u]);
        }
      };

      // ---- K pass: the sub-chunk's scores ----
      RowBits<T> cur[kUnroll];
      load_step(kb, 0, cur);
      {
        float q[TP][8];
#pragma unroll
        for (int g = 0; g < TP; ++g) {
          const float4 lo = *reinterpret_cast<const float4*>(my_q + g * DP);
          const float4 hi = *reinterpret_cast<const float4*>(my_q + g * DP + 4);
          q[g][0] = lo.x, q[g][1] = lo.y, q[g][2] = lo.z, q[g][3] = lo.w;
          q[g][4] = hi.x, q[g][5] = hi.y, q[g][6] = hi.z, q[g][7] = hi.w;
        }
        for (int base = 0; base < ns; base += kStep) {
          RowBits<T> nxt[kUnroll];
          load_step(kb, base + kStep, nxt);  // next step in flight while this one computes
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int jj = base + u * kKpb + key_lane;
            float kf[8];
            unpack_row8<T>(cur[u], kf);
            float sg[TP];
#pragma unroll
            for (int g = 0; g < TP; ++g) {
              float d = 0.0f;
#pragma unroll
              for (int e = 0; e < 8; ++e) d = fmaf(q[g][e], kf[e], d);
              sg[g] = d;
            }
            // Sum over the key's kTpk lanes; then each pair's total is written by one lane.
            if constexpr (kTpk >= TP) {
              const int mine = reduce_scatter<TP, kTpk>(sg, dl);
              if (jj < ns && (dl & (kTpk / TP - 1)) == 0) sc[mine * kSub + jj] = sg[0];
            } else {
#pragma unroll
              for (int g = 0; g < TP; ++g)
#pragma unroll
                for (int off = kTpk / 2; off > 0; off >>= 1) sg[g] += __shfl_xor_sync(0xffffffffu, sg[g], off);
#pragma unroll
              for (int g = 0; g < TP; ++g)
                if (jj < ns && g % kTpk == dl) sc[g * kSub + jj] = sg[g];
            }
          }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) cur[u] = nxt[u];
        }
      }
      load_step(vb, 0, cur);  // V's first step in flight across the statistics
      __syncthreads();

      // ---- running max and sum per pair; sc becomes exp2(s − m) ----
      for (int g = warp; g < TP; g += kSparseWarps) {
        float* row = sc + g * kSub;
        float m = -INFINITY;
        for (int jj = lane; jj < ns; jj += 32) m = fmaxf(m, row[jj]);
        const float m_old = m_s[g];
        const float m_new = fmaxf(m_old, warp_max(m));
        float l = 0.0f;
        for (int jj = lane; jj < ns; jj += 32) {
          const float e = exp2f(row[jj] - m_new);
          row[jj] = e;
          l += e;
        }
        l = warp_sum(l);
        __syncwarp();  // every lane has read m_s[g] before lane 0 rewrites it (shuffles order no memory)
        if (lane == 0) {
          const float corr = exp2f(m_old - m_new);  // 0 for the first sub-chunk (m_old = -inf)
          corr_s[g] = corr;
          l_s[g] = l_s[g] * corr + l;
          m_s[g] = m_new;
        }
      }
      __syncthreads();

      // ---- V pass: the warp's output so far × corr, plus Σ exp2(s − m)·v ----
      float acc[TP][8];
      const bool carry = s0 > k0 && kg == 0 && lane_on;  // one lane per dim holds the warp's sum
#pragma unroll
      for (int g = 0; g < TP; ++g) {
        const float corr = corr_s[g];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = carry ? my_red[g * DP + e] * corr : 0.0f;
      }
      for (int base = 0; base < ns; base += kStep) {
        RowBits<T> nxt[kUnroll];
        load_step(vb, base + kStep, nxt);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int jj = base + u * kKpb + key_lane;
          if (jj < ns) {
            float vf[8];
            unpack_row8<T>(cur[u], vf);
#pragma unroll
            for (int g = 0; g < TP; ++g) {
              const float pg = sc[g * kSub + jj];
#pragma unroll
              for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(pg, vf[e], acc[g][e]);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) cur[u] = nxt[u];
      }
      // The warp's keys → one row per warp, kept in red for the next sub-chunk or the output.
#pragma unroll
      for (int off = kTpk; off < 32; off <<= 1)
#pragma unroll
        for (int g = 0; g < TP; ++g)
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], off);
      if (kg == 0 && lane_on) {
#pragma unroll
        for (int g = 0; g < TP; ++g) {
          auto* dst = reinterpret_cast<float4*>(my_red + g * DP);
          dst[0] = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
          dst[1] = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
        }
      }
      __syncthreads();  // red complete; the next sub-chunk overwrites sc and corr_s
      s0 += ns;
    }

    // ---- the tile's results: one output per pair, summed over the warps ----
    for (int idx = threadIdx.x; idx < tp * D; idx += kSparseThreads) {
      const int g = idx / D, e = idx - g * D;
      float t = 0.0f;
      if (n > 0) {  // red holds nothing for an empty item, whose output is 0
#pragma unroll
        for (int w = 0; w < kSparseWarps; ++w) t += red[(w * TP + g) * DP + e];
      }
      const int64_t pr = p0 + g;
      if (partial) {
        a.part_o[sparse_partial_slot(z, pr, c, a.plan) * D + e] = t;
      } else {
        it.o[(pr / G) * it.o_row_stride + (pr % G) * D + e] = n > 0 ? t / l_s[g] : 0.0f;
      }
    }
    if (threadIdx.x < tp) {
      const int g = threadIdx.x;
      const int64_t pr = p0 + g;
      if (partial) {
        a.part_ml[sparse_partial_slot(z, pr, c, a.plan)] = make_float2(m_s[g], l_s[g]);
      } else {
        // LSE leaves base 2 here: natural log, as DESIGN.md's convention.
        it.lse[(pr / G) * it.lse_row_stride + pr % G] = n > 0 ? (m_s[g] + log2f(l_s[g])) * kLn2 : -INFINITY;
      }
    }
    __syncthreads();  // red, q_s, m_s and l_s are reused by the next tile
  }
}

/// Grid (items, ⌈split_pairs / 8⌉); warp w merges the chunks of pair 8·y + w of item x: the
/// chunks' states (m_c, l_c, o_c) give m = max m_c, l = Σ l_c·2^(m_c − m),
/// o = Σ o_c·2^(m_c − m) / l, lse = (m + log2 l)·ln 2.
__global__ void __launch_bounds__(kCombineWarps * 32) sparse_combine_kernel(SparseArgs a) {
  const int64_t z = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t pr = int64_t{blockIdx.y} * kCombineWarps + warp;
  const SparseAttentionItem& it = load_item(a.items, z);
  const int G = a.group, D = a.head_dim;
  const int64_t pairs = it.n_rows > 0 ? int64_t{it.n_rows} * G : 0;
  const SparseKeyChunks ch = sparse_key_chunks(it.n > 0 ? it.n : 0, pairs, a.plan);
  if (ch.count <= 1 || pr >= pairs) return;  // written by the attend kernel, or no such pair (warp-uniform)
  __shared__ float w_s[kCombineWarps][kMaxSparseSplits];
  const int64_t slot0 = sparse_partial_slot(z, pr, 0, a.plan);  // the chunks' slots are consecutive

  float m = -INFINITY;
  for (int x = lane; x < ch.count; x += 32) m = fmaxf(m, a.part_ml[slot0 + x].x);
  m = warp_max(m);
  float l = 0.0f;
  for (int x = lane; x < ch.count; x += 32) {
    const float2 ml = a.part_ml[slot0 + x];
    const float w = exp2f(ml.x - m);
    w_s[warp][x] = w;
    l += ml.y * w;
  }
  l = warp_sum(l);
  __syncwarp();
  const float inv_l = 1.0f / l;
  float* o = it.o + (pr / G) * it.o_row_stride + (pr % G) * D;
  for (int e = lane; e < D; e += 32) {
    float t = 0.0f;
    for (int x = 0; x < ch.count; ++x) t = fmaf(a.part_o[(slot0 + x) * D + e], w_s[warp][x], t);
    o[e] = t * inv_l;
  }
  if (lane == 0) it.lse[(pr / G) * it.lse_row_stride + pr % G] = (m + log2f(l)) * kLn2;
}

}  // namespace kernels

namespace {

/// An attend kernel and its dynamic shared memory.
struct AttendKernel {
  void (*kernel)(kernels::SparseArgs);
  std::size_t smem;
};

template <typename T, int DP, int TP>
AttendKernel attend_kernel() {
  return {kernels::sparse_attend_kernel<T, DP, TP>, kernels::sparse_attend_smem(TP, DP)};
}

// Head dims are compiled for 32, 64, 128 and 256 (lanes past the real head dim idle): bounded
// dispatch, 48 attend kernels in all.
template <typename T, int TP>
AttendKernel dispatch_dim(int32_t head_dim) {
  if (head_dim <= 32) return attend_kernel<T, 32, TP>();
  if (head_dim <= 64) return attend_kernel<T, 64, TP>();
  if (head_dim <= 128) return attend_kernel<T, 128, TP>();
  return attend_kernel<T, 256, TP>();
}

template <typename T>
AttendKernel dispatch_tile(int32_t tile_pairs, int32_t head_dim) {
  switch (tile_pairs) {
    case 1: return dispatch_dim<T, 1>(head_dim);
    case 2: return dispatch_dim<T, 2>(head_dim);
    case 4: return dispatch_dim<T, 4>(head_dim);
    default: return dispatch_dim<T, 8>(head_dim);
  }
}

/// The attend kernel of a launch of `dtype` with this tile and head dim.
AttendKernel dispatch_attend(DType dtype, int32_t tile_pairs, int32_t head_dim) {
  switch (dtype) {
    case DType::kFloat16: return dispatch_tile<__half>(tile_pairs, head_dim);
    case DType::kBFloat16: return dispatch_tile<__nv_bfloat16>(tile_pairs, head_dim);
    case DType::kFloat32: break;
  }
  return dispatch_tile<float>(tile_pairs, head_dim);
}

}  // namespace

int launch_sparse_attention(const SparseAttentionParams& p, void* stream) {
  if (!check_sparse_attention(p)) return cudaErrorInvalidValue;
  if (p.n_items == 0) return cudaSuccess;
  kernels::SparseArgs a{};
  a.items = p.items;
  a.plan = p.plan;
  a.group = p.group;
  a.head_dim = p.head_dim;
  a.scale2 = p.sm_scale * kernels::kLog2e;
  const bool split = sparse_attention_workspace_bytes(p.plan, p.n_items, p.head_dim) > 0;
  if (split) {
    auto* base = static_cast<char*>(p.workspace);
    a.part_ml = reinterpret_cast<float2*>(base);
    a.part_o = reinterpret_cast<float*>(base + sparse_partials_offset(p.plan, p.n_items));
  }
  auto* st = static_cast<cudaStream_t>(stream);
  const AttendKernel attend = dispatch_attend(p.dtype, p.plan.tile_pairs, p.head_dim);
  const dim3 attend_grid(static_cast<unsigned>(p.n_items), static_cast<unsigned>(p.plan.tiles),
                         static_cast<unsigned>(p.plan.kv_splits));
  auto* const kernel = attend.kernel;
  kernel<<<attend_grid, kernels::kSparseThreads, attend.smem, st>>>(a);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || !split) return e;
  const dim3 grid(static_cast<unsigned>(p.n_items),
                  static_cast<unsigned>((p.plan.split_pairs + kernels::kCombineWarps - 1) / kernels::kCombineWarps));
  kernels::sparse_combine_kernel<<<grid, kernels::kCombineWarps * 32, 0, st>>>(a);
  return cudaGetLastError();
}

int load_sparse_attention_kernels(DType dtype, int32_t head_dim) {
  cudaFuncAttributes attr{};
  for (const int32_t tile_pairs : {1, 2, 4, 8}) {
    if (cudaError_t e = cudaFuncGetAttributes(&attr, dispatch_attend(dtype, tile_pairs, head_dim).kernel); e != cudaSuccess) {
      return e;
    }
  }
  return cudaFuncGetAttributes(&attr, kernels::sparse_combine_kernel);
}

}  // namespace hgca::gpu
