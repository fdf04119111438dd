// The sparse attention kernel, written once over a small vector interface `A` (W float lanes) and
// compiled once per ISA: each sparse_<isa>.cpp defines HGCA_ARCH_NS and its `A`, then includes this,
// so every ISA's copy has its own symbols. It uses no std:: template that the compiler might emit
// out of line (std::vector, std::fill …): the linker could pick such a copy, compiled with AVX-512
// flags, for every caller in the program.
//
// One pass over K and V (one run, or a few runs in turn) in blocks of keys, online softmax in
// base 2 (scores are pre-multiplied by log2 e; converted to natural log at the edge). Per block, for
// a tile of up to 8 queries (all G heads of a decode step together): the scores (each K row loaded
// once for the whole tile, 16 keys' partial sums reduced together), at most one max/rescale for the block,
// then the V rows accumulated into the tile's fp32 outputs held in registers; the next block (of
// the next run, at a run's end) is prefetched meanwhile. The common head dims are compiled with
// their chunk count known, so the loops unroll and the queries stay in registers.
// On one Zen 4 core (G = 4, D = 128) the FMA pipe takes q·k 8G and p·v 8G 512-bit FMAs per key (q·k 4G
// with vdpbf16ps for bf16): 48 of the 77–85 cycles a bf16 key measured (bench/results/session31).
// weights() (a re-evaluation's per-key softmax weights) reuses the score loop (block_scores) over K
// alone.
#pragma once

#ifndef HGCA_ARCH_NS
#error "define HGCA_ARCH_NS before including sparse_kernel.hpp"
#endif

#include <math.h>
#include <stdlib.h>

#include <cstdint>
#include <new>

#include "cpu/arch/sparse_arch.hpp"

namespace hgca::cpu::arch::HGCA_ARCH_NS {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr int kMaxTile = 8;  // queries whose accumulators live in registers at once

constexpr float kInf = __builtin_inff();

inline float fmax_(float a, float b) { return a > b ? a : b; }

/// Per-thread buffer of one unit (scaled fp32 queries, output accumulators, running max and sum),
/// grown as needed and kept for the thread's life.
struct Scratch {
  float* data = nullptr;
  size_t size = 0;
  ~Scratch() { free(data); }
  float* get(size_t n) {
    if (n > size) {
      const size_t want = (n + 1023) / 1024 * 1024;
      auto* grown = static_cast<float*>(aligned_alloc(64, want * sizeof(float)));
      if (!grown) throw std::bad_alloc();  // the call fails with kOutOfMemory; this buffer stays
      free(data);
      data = grown;
      size = want;
    }
    return data;
  }
};
inline float* scratch(size_t n) {
  thread_local Scratch s;
  return s.get(n);
}

/// Head-dim elements are read 2W at a time as two W-lane halves. For types the ISA widens
/// "interleaved" (bf16: the even elements by a shift, the odd ones by a mask, one instruction per W
/// elements each), half 0 holds elements 0, 2, 4 … and half 1 elements 1, 3, 5 …; otherwise half 0
/// holds elements [0, W) and half 1 [W, 2W). Queries and outputs use the same order (pos()), so the
/// dot products and accumulations are unchanged. `rem` is the number of row elements from p on.
template <class A, class T>
inline typename A::V load_half(const T* p, int half, int32_t rem) {
  if constexpr (A::template kInterleaved<T>) {
    return A::load_half_interleaved(p, half, rem);
  } else {
    const int32_t r = rem - half * A::W;
    return r >= A::W ? A::template load_kv<T>(p + half * A::W)
                     : r > 0 ? A::template load_kv_tail<T>(p + half * A::W, r) : A::zero();
  }
}

/// Where head-dim element i lives in the query and output buffers.
template <class A, class T>
inline int32_t pos(int32_t i) {
  if constexpr (A::template kInterleaved<T>) {
    const int32_t base = i / (2 * A::W) * (2 * A::W), r = i % (2 * A::W);
    return base + (r & 1) * A::W + r / 2;
  } else {
    return i;
  }
}

/// Keys per block (at most): a block's scores are computed first, then its softmax (at most one
/// running-max update and one rescale of the outputs per block, not per key), then its V rows.
constexpr int kBlock = 64;
/// Keys per block when one tile of queries streams K and V (a decode step): the block's rows (V read
/// once per pass of S slices, often twice or more) and the next block's, prefetched meanwhile, must stay in
/// L1 — AMD's software prefetches fill L1, and at 64 keys of D 128 they overflowed Zen 4's 32 KB
/// (one core ran at 0.55 of the DRAM read at 64 keys, 0.66 at 16). With several tiles each block is
/// reused from cache by every tile, and kBlock's fewer blocks cost less softmax overhead.
constexpr int kStreamBlock = 16;
/// How far (log2) a score may pass the running max before the max moves (see block()).
constexpr float kRescaleMargin = 8.0f;

/// Head-dim chunks of 2W elements: NC at compile time for the common head dims (loops unrolled, the
/// queries' chunks kept in registers where they fit), NC = 0 for the others (nc at run time).
template <int NC>
struct Chunks {
  int32_t nc;
  constexpr int32_t count() const { return NC > 0 ? NC : nc; }
};

/// Row elements from chunk c on (2W, or `tail` in the last chunk). The compiled head dims (NC > 0:
/// 64, 128, 256) are whole chunks, so there it is 2W at compile time: no tail test per load.
template <int NC, int W>
[[gnu::always_inline]] inline int32_t row_left(int32_t c, int32_t nc, int32_t tail) {
  if constexpr (NC > 0) return 2 * W;
  return c + 1 < nc ? 2 * W : tail;
}

/// Largest divisor of n that is ≤ cap (≥ 1).
constexpr int divisor_at_most(int n, int cap) {
  int best = 1;
  for (int s = 1; s <= n && s <= cap; ++s) best = n % s == 0 ? s : best;
  return best;
}

/// The next block's K and V rows, prefetched into L2 a few lines per loop iteration of this block, so
/// that the requests are spread evenly over the block's compute (bursts fill the core's miss queue and
/// stall its own loads). A block's compute is too long for the out-of-order window to keep DRAM's
/// latency covered on its own.
struct NextBlock {
  const char* k = nullptr;
  const char* v = nullptr;  // null: K only
  int64_t bytes = 0;     // of K, and of V
  int64_t at = 0;        // next byte of K, then of V
  int64_t per_step = 0;  // bytes per loop iteration
  int64_t total() const { return v ? 2 * bytes : bytes; }
  void step() {
    const int64_t end = at + per_step < total() ? at + per_step : total();
    for (; at < end; at += 64) __builtin_prefetch(at < bytes ? k + at : v + (at - bytes), 0, 2);
  }
};

/// The scores of the QT queries at qb against nt ≤ kBlock K rows at k (qb, tail, scale as for
/// block()), into sc (query q's at sc + q * sc_stride, slots [nt, round_up(nt, W)) set to
/// -inf), prefetching `next` meanwhile: W keys at a time, KT rows loaded together and dotted with
/// every query of the tile (each query chunk loaded once per KT keys); the W keys' partial sums
/// reduced together (one transpose-reduction per query instead of W horizontal sums).
template <class A, class T, int NC, int QT>
[[gnu::always_inline]] inline void block_scores(const T* k, int32_t nt, int32_t d, Chunks<NC> ch, int32_t tail, const float* qb, float scale,
                         float* sc, int64_t sc_stride, NextBlock& next) {
  using V = typename A::V;
  constexpr int W = A::W;
  const int32_t nc = ch.count(), dp = nc * 2 * W;
  auto rem = [&](int32_t c) { return row_left<NC, W>(c, nc, tail); };
  constexpr int KT = A::kRegs >= 32 || QT <= 4 ? 2 : 1;
  for (int32_t s0 = 0; s0 < nt; s0 += W) {
    const int32_t ns = nt - s0 < W ? nt - s0 : W;
    alignas(64) V red[QT][W];
    for (int32_t t = 0; t < ns; t += KT) {
      next.step();
      const T* kr[KT];
      for (int u = 0; u < KT; ++u) kr[u] = k + static_cast<int64_t>(s0 + (t + u < ns ? t + u : ns - 1)) * d;
      V acc[KT][QT];
      for (int u = 0; u < KT; ++u)
        for (int q = 0; q < QT; ++q) acc[u][q] = A::zero();
      for (int32_t c = 0; c < nc; ++c) {
        if constexpr (A::template kDotBf16<T>) {
          typename A::Bf16Pairs kp[KT];
          for (int u = 0; u < KT; ++u) kp[u] = A::load_bf16_pairs(kr[u] + c * 2 * W, rem(c));
          for (int q = 0; q < QT; ++q) {
            const V qc = A::load(qb + q * dp + c * W);
            for (int u = 0; u < KT; ++u) acc[u][q] = A::dot_bf16(acc[u][q], qc, kp[u]);
          }
        } else {
          V lo[KT], hi[KT];
          for (int u = 0; u < KT; ++u) {
            lo[u] = load_half<A>(kr[u] + c * 2 * W, 0, rem(c));
            hi[u] = load_half<A>(kr[u] + c * 2 * W, 1, rem(c));
          }
          for (int q = 0; q < QT; ++q) {
            const V ql = A::load(qb + q * dp + c * 2 * W), qh = A::load(qb + q * dp + c * 2 * W + W);
            for (int u = 0; u < KT; ++u) acc[u][q] = A::fma(qh, hi[u], A::fma(ql, lo[u], acc[u][q]));
          }
        }
      }
      // t + u < W: an odd ns is < W; the slot of the repeated last row is cleared below.
      for (int u = 0; u < KT; ++u)
        for (int q = 0; q < QT; ++q) red[q][t + u] = acc[u][q];
    }
    for (int q = 0; q < QT; ++q) {
      for (int32_t t = ns; t < W; ++t) red[q][t] = A::zero();
      V v = A::reduce_w(red[q]);
      if constexpr (A::template kDotBf16<T>) v = A::mul(v, A::set1(scale));
      float* row = sc + q * sc_stride;
      A::store(row + s0, v);
      for (int32_t t = ns; t < W; ++t) row[s0 + t] = -kInf;
    }
  }
}

/// One block of nt ≤ kBlock keys for queries [q0, q0 + QT): dp = 2W·nc floats per query in qb and ob,
/// `tail` = elements of a row in its last chunk (1..2W). `scale` multiplies the scores when the queries
/// are kept unscaled (the BF16 dot-product path). The next block's n_next rows at k_next, v_next are
/// prefetched meanwhile.
template <class A, class T, int NC, int QT>
inline void block(const T* k, const T* v, int32_t nt, int32_t d, Chunks<NC> ch, int32_t tail, const float* qb,
                  float scale, float* ob, float* m, float* l, const T* k_next, const T* v_next, int32_t n_next) {
  using V = typename A::V;
  constexpr int W = A::W;
  const int32_t nc = ch.count(), dp = nc * 2 * W;
  auto rem = [&](int32_t c) { return row_left<NC, W>(c, nc, tail); };
  alignas(64) float sc[QT][kBlock];
  constexpr int KT = A::kRegs >= 32 || QT <= 4 ? 2 : 1;
  constexpr int S = NC > 0 ? divisor_at_most(2 * NC, (A::kRegs / 2) / QT) : 1;
  NextBlock next{reinterpret_cast<const char*>(k_next), reinterpret_cast<const char*>(v_next),
                 static_cast<int64_t>(n_next) * d * static_cast<int64_t>(sizeof(T))};
  const int64_t steps = (nt + KT - 1) / KT + static_cast<int64_t>(dp / (S * W)) * nt;
  next.per_step = (2 * next.bytes + steps - 1) / steps;
  block_scores<A, T, NC, QT>(k, nt, d, ch, tail, qb, scale, &sc[0][0], kBlock, next);

  // Online softmax over the block. The running max m moves only when a score passes it by more than
  // kRescaleMargin, so most blocks skip the max's reduction, the rescale factor and the outputs'
  // rescale (FlashAttention-4's conditional rescaling); the weights stay ≤ 2^kRescaleMargin (up to
  // 2^16 once |m| ≥ 2^27, where m + kRescaleMargin may round up by 16).
  // o and l share m, so o / l and the LSE (m + log2 l) are unchanged.
  float alpha[QT];
  bool rescale = false;
  for (int q = 0; q < QT; ++q) {
    V mx = A::load(sc[q]);
    for (int32_t s0 = W; s0 < nt; s0 += W) mx = A::max(mx, A::load(sc[q] + s0));
    alpha[q] = 1.0f;
    if (A::any_above(mx, m[q] + kRescaleMargin)) {  // m = -inf at the start: any finite score
      const float mn = A::hmax(mx);
      alpha[q] = exp2f(m[q] - mn);  // m = -inf at the start: 0, and o, l are 0 anyway
      m[q] = mn;
      rescale = true;
    }
    const V mv = A::set1(m[q]);
    V sum = A::zero();
    for (int32_t s0 = 0; s0 < nt; s0 += W) {
      const V p = A::exp2(A::sub(A::load(sc[q] + s0), mv));
      A::store(sc[q] + s0, p);
      sum = A::add(sum, p);
    }
    l[q] = l[q] * alpha[q] + A::hsum(sum);
  }

  // Values: S W-wide slices of the head dim per pass (QT·S accumulators in registers), each V row's
  // slice loaded and widened once per pass, each weight broadcast once per row.
  for (int32_t j0 = 0; j0 < dp; j0 += S * W) {
    V acc[QT][S];
    for (int q = 0; q < QT; ++q) {
      const V a = A::set1(alpha[q]);
      for (int s = 0; s < S; ++s) {
        acc[q][s] = A::load(ob + q * dp + j0 + s * W);
        if (rescale) acc[q][s] = A::mul(acc[q][s], a);
      }
    }
    for (int32_t t = 0; t < nt; ++t) {
      next.step();
      const T* vr = v + static_cast<int64_t>(t) * d;
      V vv[S];
      for (int s = 0; s < S; ++s) {
        const int32_t c = (j0 / W + s) / 2;
        vv[s] = load_half<A>(vr + c * 2 * W, (j0 / W + s) % 2, rem(c));
      }
      for (int q = 0; q < QT; ++q) {
        const V w = A::set1(sc[q][t]);
        for (int s = 0; s < S; ++s) acc[q][s] = A::fma(w, vv[s], acc[q][s]);
      }
    }
    for (int q = 0; q < QT; ++q)
      for (int s = 0; s < S; ++s) A::store(ob + q * dp + j0 + s * W, acc[q][s]);
  }
}

/// All blocks of one run of n keys over queries [0, nq) in tiles of up to kMaxTile, the state
/// (os, ms, ls) carried on from the runs before; the first n_after rows at k_after, v_after (the
/// next run's) are prefetched during its last block.
template <class A, class T, int NC>
void blocks(const T* k, const T* v, int64_t n, int32_t d, Chunks<NC> ch, int32_t nq, const float* qs, float scale,
            float* os, float* ms, float* ls, const T* k_after, const T* v_after, int64_t n_after) {
  const int32_t dp = ch.count() * 2 * A::W;
  const int32_t tail = d - (ch.count() - 1) * 2 * A::W;
  const int32_t bk = nq > kMaxTile ? kBlock : kStreamBlock;
  for (int64_t t0 = 0; t0 < n; t0 += bk) {
    const auto nt = static_cast<int32_t>(n - t0 < bk ? n - t0 : bk);
    const T* kb = k + t0 * d;
    const T* vb = v + t0 * d;
    const int64_t left = n - t0 - nt;
    const T* kn = left > 0 ? kb + nt * d : k_after;
    const T* vn = left > 0 ? vb + nt * d : v_after;
    const int64_t ahead = left > 0 ? left : n_after;
    int32_t n_next = static_cast<int32_t>(ahead < bk ? ahead : bk);  // prefetched by the first tile
    for (int32_t q0 = 0; q0 < nq; q0 += kMaxTile) {
      const float* qb = qs + static_cast<int64_t>(q0) * dp;  // q0 · dp passes 2^31 at ~2M-row appends
      float* ob = os + static_cast<int64_t>(q0) * dp;
      float* m = ms + q0;
      float* l = ls + q0;
      switch (nq - q0 < kMaxTile ? nq - q0 : kMaxTile) {
        case 1: block<A, T, NC, 1>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 2: block<A, T, NC, 2>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 3: block<A, T, NC, 3>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 4: block<A, T, NC, 4>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 5: block<A, T, NC, 5>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 6: block<A, T, NC, 6>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        case 7: block<A, T, NC, 7>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
        default: block<A, T, NC, 8>(kb, vb, nt, d, ch, tail, qb, scale, ob, m, l, kn, vn, n_next); break;
      }
      n_next = 0;
    }
  }
}

/// Queries [0, nq) (row q / group, head q % group, rows q_row_stride elements apart) into qs, dp
/// floats each, zeroed beforehand: scaled by `scale` in pos() order, or, on the BF16 dot-product
/// path, raw bf16 pairs in natural order (round_up(d, 2W) / 2 ≤ dp floats; block_scores scales
/// the scores instead).
template <class A, class T>
void load_queries(const void* q, int64_t q_row_stride, int32_t nq, int32_t group, int32_t d, int32_t dp, float scale,
                  float* qs) {
  const T* q_in = static_cast<const T*>(q);
  for (int32_t i = 0; i < nq; ++i) {
    const T* src = q_in + (i / group) * q_row_stride + (i % group) * d;
    if constexpr (A::template kDotBf16<T>) {
      auto* dst = reinterpret_cast<T*>(qs + static_cast<int64_t>(i) * dp);
      for (int32_t e = 0; e < d; ++e) dst[e] = src[e];
    } else {
      for (int32_t e = 0; e < d; ++e) qs[static_cast<int64_t>(i) * dp + pos<A, T>(e)] = A::to_float(src[e]) * scale;
    }
  }
}

template <class A, class T>
void unit(const UnitParams& p) {
  const int32_t d = p.head_dim, group = p.group;
  const int32_t nq = p.n_rows * group;
  auto out_o = [&](int32_t q) { return p.o + (q / group) * p.o_row_stride + (q % group) * d; };
  auto out_lse = [&](int32_t q) -> float& { return p.lse[(q / group) * p.lse_row_stride + q % group]; };
  if (p.n == 0) {
    for (int32_t q = 0; q < nq; ++q) {
      float* o = out_o(q);
      for (int32_t i = 0; i < d; ++i) o[i] = 0.0f;
      out_lse(q) = -kInf;
    }
    return;
  }
  const int32_t dp = (d + 2 * A::W - 1) / (2 * A::W) * (2 * A::W);
  const size_t qd = static_cast<size_t>(nq) * dp;
  float* const qs = scratch(2 * qd + 2 * static_cast<size_t>(nq));
  float* const os = qs + qd;
  float* const ms = os + qd;
  float* const ls = ms + nq;
  for (size_t i = 0; i < 2 * qd; ++i) qs[i] = 0.0f;
  for (int32_t q = 0; q < nq; ++q) ms[q] = -kInf, ls[q] = 0.0f;
  const float scale = p.sm_scale * kLog2e;
  load_queries<A, T>(p.q, p.q_row_stride, nq, group, d, dp, scale, qs);

  // One pass over the runs, the online softmax's state carried across.
  const KvRun* runs = p.runs;
  const int32_t n_runs = p.n_runs;
  for (int32_t r = 0; r < n_runs; ++r) {
    const T* k = static_cast<const T*>(runs[r].k);
    const T* v = static_cast<const T*>(runs[r].v);
    const int64_t n = runs[r].n;
    const bool more = r + 1 < n_runs;
    const T* ka = more ? static_cast<const T*>(runs[r + 1].k) : nullptr;
    const T* va = more ? static_cast<const T*>(runs[r + 1].v) : nullptr;
    const int64_t na = more ? runs[r + 1].n : 0;
    // The head dims of common models unrolled at compile time; the others loop over chunks. Only
    // whole chunks (d = dp) take the unrolled code: it reads 2W elements per chunk, so d = 120 there
    // would read past each row's end (and past the run's last row).
    switch (d == dp ? dp : 0) {
      case 64: blocks<A, T, 64 / (2 * A::W)>(k, v, n, d, {}, nq, qs, scale, os, ms, ls, ka, va, na); break;
      case 128: blocks<A, T, 128 / (2 * A::W)>(k, v, n, d, {}, nq, qs, scale, os, ms, ls, ka, va, na); break;
      case 256: blocks<A, T, 256 / (2 * A::W)>(k, v, n, d, {}, nq, qs, scale, os, ms, ls, ka, va, na); break;
      default: blocks<A, T, 0>(k, v, n, d, {dp / (2 * A::W)}, nq, qs, scale, os, ms, ls, ka, va, na); break;
    }
  }
  for (int32_t q = 0; q < nq; ++q) {
    const float inv = 1.0f / ls[q];
    float* dst = out_o(q);
    const float* src = os + static_cast<int64_t>(q) * dp;
    for (int32_t i = 0; i < d; ++i) dst[i] = src[pos<A, T>(i)] * inv;
    out_lse(q) = (ms[q] + log2f(ls[q])) * kLn2;  // base 2 inside, natural log at the edge
  }
}

/// The scores of the QT queries at qb (as block()'s) against all n keys of the runs, into sc
/// (query q's at sc + q * stride, stride ≥ n + W: a run's last W-wide store may pass its end), each
/// block prefetching the next one's K.
template <class A, class T, int NC, int QT>
void run_scores(const KvRun* runs, int32_t n_runs, int32_t d, Chunks<NC> ch, int32_t tail, const float* qb,
                float scale, float* sc, int64_t stride) {
  int64_t at = 0;
  for (int32_t r = 0; r < n_runs; ++r) {
    const T* k = static_cast<const T*>(runs[r].k);
    const int64_t n = runs[r].n;
    for (int64_t t0 = 0; t0 < n; t0 += kBlock) {
      const auto nt = static_cast<int32_t>(n - t0 < kBlock ? n - t0 : kBlock);
      const int64_t left = n - t0 - nt;
      const bool more = r + 1 < n_runs;
      const T* kn = left > 0 ? k + (t0 + nt) * d : more ? static_cast<const T*>(runs[r + 1].k) : nullptr;
      const int64_t ahead = left > 0 ? left : more ? runs[r + 1].n : 0;
      NextBlock next{reinterpret_cast<const char*>(kn), nullptr,
                     (ahead < kBlock ? ahead : kBlock) * d * static_cast<int64_t>(sizeof(T))};
      next.per_step = (next.bytes + nt - 1) / nt * 2;  // block_scores steps about nt / 2 times
      block_scores<A, T, NC, QT>(k + t0 * d, nt, d, ch, tail, qb, scale, sc + at + t0, stride, next);
    }
    at += n;
  }
}

/// Queries [q0, q0 + QT) of a WeightsParams: their scores over the n keys, each query's softmax, and
/// its weights added to its head's row of acc.
template <class A, class T, int NC, int QT>
void weights_tile(const WeightsParams& p, Chunks<NC> ch, int32_t tail, const float* qb, float scale, int32_t q0,
                  float* sc, int64_t stride) {
  using V = typename A::V;
  constexpr int W = A::W;
  const int64_t n = p.n;
  run_scores<A, T, NC, QT>(p.runs, p.n_runs, p.head_dim, ch, tail, qb, scale, sc, stride);
  for (int q = 0; q < QT; ++q) {
    float* s = sc + q * stride;
    V mx = A::set1(-kInf);
    int64_t t = 0;
    for (; t + W <= n; t += W) mx = A::max(mx, A::load(s + t));
    float m = A::hmax(mx);
    for (; t < n; ++t) m = fmax_(m, s[t]);
    const V mv = A::set1(m);
    V sum = A::zero();
    for (t = 0; t + W <= n; t += W) {
      const V e = A::exp2(A::sub(A::load(s + t), mv));
      A::store(s + t, e);
      sum = A::add(sum, e);
    }
    float total = A::hsum(sum);
    for (; t < n; ++t) total += s[t] = exp2f(s[t] - m);
    const float inv = 1.0f / total;
    const V iv = A::set1(inv);
    float* acc = p.acc + static_cast<int64_t>((q0 + q) % p.group) * (p.acc_stride > 0 ? p.acc_stride : n);
    for (t = 0; t + W <= n; t += W) A::store(acc + t, A::fma(A::load(s + t), iv, A::load(acc + t)));
    for (; t < n; ++t) acc[t] += s[t] * inv;
  }
}

template <class A, class T, int NC>
void weights_tiles(const WeightsParams& p, Chunks<NC> ch, const float* qs, float scale, float* sc, int64_t stride) {
  const int32_t nq = p.n_rows * p.group;
  const int32_t dp = ch.count() * 2 * A::W;
  const int32_t tail = p.head_dim - (ch.count() - 1) * 2 * A::W;
  for (int32_t q0 = 0; q0 < nq; q0 += kMaxTile) {
    const float* qb = qs + static_cast<int64_t>(q0) * dp;
    switch (nq - q0 < kMaxTile ? nq - q0 : kMaxTile) {
      case 1: weights_tile<A, T, NC, 1>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 2: weights_tile<A, T, NC, 2>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 3: weights_tile<A, T, NC, 3>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 4: weights_tile<A, T, NC, 4>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 5: weights_tile<A, T, NC, 5>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 6: weights_tile<A, T, NC, 6>(p, ch, tail, qb, scale, q0, sc, stride); break;
      case 7: weights_tile<A, T, NC, 7>(p, ch, tail, qb, scale, q0, sc, stride); break;
      default: weights_tile<A, T, NC, 8>(p, ch, tail, qb, scale, q0, sc, stride); break;
    }
  }
}

/// WeightsParams' kernel: one pass over K per tile of up to 8 queries (their scores kept for all n
/// keys, base-2 as in unit()), then each query's softmax added to acc.
template <class A, class T>
void weights(const WeightsParams& p) {
  if (p.n == 0) return;
  const int32_t d = p.head_dim, nq = p.n_rows * p.group;
  const int32_t dp = (d + 2 * A::W - 1) / (2 * A::W) * (2 * A::W);
  const size_t qd = static_cast<size_t>(nq) * dp;
  const int64_t stride = (p.n + 2 * A::W - 1) / A::W * A::W;  // ≥ n + W; fits weights_work_floats
  float* const qs = p.work;
  float* const sc = qs + qd;
  for (size_t i = 0; i < qd; ++i) qs[i] = 0.0f;
  const float scale = p.sm_scale * kLog2e;
  load_queries<A, T>(p.q, p.q_row_stride, nq, p.group, d, dp, scale, qs);
  switch (d == dp ? dp : 0) {  // as in unit()
    case 64: weights_tiles<A, T, 64 / (2 * A::W)>(p, {}, qs, scale, sc, stride); break;
    case 128: weights_tiles<A, T, 128 / (2 * A::W)>(p, {}, qs, scale, sc, stride); break;
    case 256: weights_tiles<A, T, 256 / (2 * A::W)>(p, {}, qs, scale, sc, stride); break;
    default: weights_tiles<A, T, 0>(p, {dp / (2 * A::W)}, qs, scale, sc, stride); break;
  }
}

template <class A>
Kernels kernels() {
  return {&unit<A, float>,    &unit<A, typename A::fp16>,    &unit<A, typename A::bf16>,
          &weights<A, float>, &weights<A, typename A::fp16>, &weights<A, typename A::bf16>};
}

}  // namespace hgca::cpu::arch::HGCA_ARCH_NS
