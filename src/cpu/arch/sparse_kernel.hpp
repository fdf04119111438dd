// The sparse attention kernel, written once over a small vector interface `A` (W float lanes) and
// compiled once per ISA: each sparse_<isa>.cpp defines HGCA_ARCH_NS and its `A`, then includes this,
// so every ISA's copy has its own symbols. It uses no std:: template that the compiler might emit
// out of line (std::vector, std::fill …): the linker could pick such a copy, compiled with AVX-512
// flags, for every caller in the program.
//
// One pass over K and V in blocks of W keys, online softmax in base 2 (scores are pre-multiplied by
// log2 e; converted to natural log at the edge): for each block, every query of a tile of up to 8
// (all G heads of a decode step together) is dotted with each K row while that row sits in
// registers, then the block's V rows are accumulated into the queries' fp32 outputs.
#pragma once

#ifndef HGCA_ARCH_NS
#error "define HGCA_ARCH_NS before including sparse_kernel.hpp"
#endif

#include <math.h>
#include <stdlib.h>

#include <cstdint>

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
      free(data);
      size = (n + 1023) / 1024 * 1024;
      data = static_cast<float*>(aligned_alloc(64, size * sizeof(float)));
      if (!data) abort();
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

/// One block of nt ≤ W keys for queries [q0, q0 + QT). `scale` multiplies the scores when the
/// queries are kept unscaled (the BF16 dot-product path).
template <class A, class T, int QT>
inline void block(const T* k, const T* v, int32_t nt, int32_t d, int32_t dp, const float* qb,
                  float scale, float* ob, float* m, float* l) {
  using V = typename A::V;
  constexpr int W = A::W;
  alignas(64) float sc[QT][W];
  // Scores: each K row is loaded once and dotted with every query of the tile; the W rows' partial
  // sums are reduced together (one transpose-reduction per query instead of W horizontal sums).
  {
    alignas(64) V red[QT][W];
    for (int32_t t = 0; t < nt; ++t) {
      const T* kr = k + static_cast<int64_t>(t) * d;
      V acc[QT];
      for (int q = 0; q < QT; ++q) acc[q] = A::zero();
      if constexpr (A::template kDotBf16<T>) {
        for (int32_t j = 0; j < d; j += 2 * W) {
          const auto kp = A::load_bf16_pairs(kr + j, d - j);
          for (int q = 0; q < QT; ++q) acc[q] = A::dot_bf16(acc[q], qb + q * dp + j / 2, kp);
        }
      } else {
        for (int32_t j = 0; j < dp; j += 2 * W) {
          const V lo = load_half<A>(kr + j, 0, d - j);
          const V hi = load_half<A>(kr + j, 1, d - j);
          for (int q = 0; q < QT; ++q) {
            acc[q] = A::fma(A::load(qb + q * dp + j), lo, acc[q]);
            acc[q] = A::fma(A::load(qb + q * dp + j + W), hi, acc[q]);
          }
        }
      }
      for (int q = 0; q < QT; ++q) red[q][t] = acc[q];
    }
    for (int q = 0; q < QT; ++q) {
      for (int32_t t = nt; t < W; ++t) red[q][t] = A::zero();
      V s = A::reduce_w(red[q]);
      if constexpr (A::template kDotBf16<T>) s = A::mul(s, A::set1(scale));
      A::store(sc[q], s);
    }
  }
  // Online softmax: new running max, rescale factor of the old state, this block's weights.
  alignas(64) float pw[QT][W];
  float alpha[QT];
  for (int q = 0; q < QT; ++q) {
    for (int32_t t = nt; t < W; ++t) sc[q][t] = -kInf;
    const V s = A::load(sc[q]);
    const float mn = fmax_(m[q], A::hmax(s));
    alpha[q] = exp2f(m[q] - mn);  // m = -inf at the start: 0, and o, l are 0 anyway
    const V p = A::exp2(A::sub(s, A::set1(mn)));
    A::store(pw[q], p);
    l[q] = l[q] * alpha[q] + A::hsum(p);
    m[q] = mn;
  }
  // Values: one W-wide slice of the head dim at a time, over the block's rows.
  for (int32_t j = 0; j < dp; j += W) {
    const int half = (j / W) % 2;
    V acc[QT];
    for (int q = 0; q < QT; ++q) acc[q] = A::mul(A::load(ob + q * dp + j), A::set1(alpha[q]));
    for (int32_t t = 0; t < nt; ++t) {
      const V vv = load_half<A>(v + static_cast<int64_t>(t) * d + (j - half * W), half, d - (j - half * W));
      for (int q = 0; q < QT; ++q) acc[q] = A::fma(A::set1(pw[q][t]), vv, acc[q]);
    }
    for (int q = 0; q < QT; ++q) A::store(ob + q * dp + j, acc[q]);
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
  const T* q_in = static_cast<const T*>(p.q);
  for (int32_t q = 0; q < nq; ++q) {
    const T* src = q_in + (q / group) * p.q_row_stride + (q % group) * d;
    if constexpr (A::template kDotBf16<T>) {
      // Raw bf16 pairs in natural order, zero-padded (round_up(d, 2W) / 2 ≤ dp floats).
      auto* dst = reinterpret_cast<T*>(qs + q * dp);
      for (int32_t i = 0; i < d; ++i) dst[i] = src[i];
    } else {
      for (int32_t i = 0; i < d; ++i) qs[q * dp + pos<A, T>(i)] = A::to_float(src[i]) * scale;
    }
  }

  const T* k = static_cast<const T*>(p.k);
  const T* v = static_cast<const T*>(p.v);
  for (int64_t t0 = 0; t0 < p.n; t0 += A::W) {
    const auto nt = static_cast<int32_t>(p.n - t0 < A::W ? p.n - t0 : A::W);
    const T* kb = k + t0 * d;
    const T* vb = v + t0 * d;
    for (int32_t q0 = 0; q0 < nq; q0 += kMaxTile) {
      const float* qb = qs + q0 * dp;
      float* ob = os + q0 * dp;
      float* m = ms + q0;
      float* l = ls + q0;
      switch (nq - q0 < kMaxTile ? nq - q0 : kMaxTile) {
        case 1: block<A, T, 1>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 2: block<A, T, 2>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 3: block<A, T, 3>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 4: block<A, T, 4>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 5: block<A, T, 5>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 6: block<A, T, 6>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        case 7: block<A, T, 7>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
        default: block<A, T, 8>(kb, vb, nt, d, dp, qb, scale, ob, m, l); break;
      }
    }
  }
  for (int32_t q = 0; q < nq; ++q) {
    const float inv = 1.0f / ls[q];
    float* dst = out_o(q);
    const float* src = os + q * dp;
    for (int32_t i = 0; i < d; ++i) dst[i] = src[pos<A, T>(i)] * inv;
    out_lse(q) = (ms[q] + log2f(ls[q])) * kLn2;  // base 2 inside, natural log at the edge
  }
}

template <class A>
Kernels kernels() {
  return {&unit<A, float>, &unit<A, typename A::fp16>, &unit<A, typename A::bf16>};
}

}  // namespace hgca::cpu::arch::HGCA_ARCH_NS
