// Straightforward fp32 host attention: two passes over the keys (scores, then weighted values).
#include "cpu/attention_host.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dtype.hpp"

namespace hgca::cpu {
namespace {

template <typename T>
float dot(const float* q, const T* k, int32_t d) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int32_t i = 0; i < d; ++i) s += q[i] * detail::to_float(k[i]);
  return s;
}

template <typename T>
void axpy(float a, const T* v, float* o, int32_t d) {
#pragma omp simd
  for (int32_t i = 0; i < d; ++i) o[i] += a * detail::to_float(v[i]);
}

}  // namespace

template <typename T>
void attend_group(const GroupAttentionParams<T>& p) {
  int64_t n_keys = 0;
  for (const auto& seg : p.segments) n_keys += seg.n;
  const int32_t d = p.head_dim;
  std::vector<float> q(static_cast<size_t>(d));
  std::vector<float> scores(static_cast<size_t>(n_keys));
  std::vector<float> acc;  // per (g, key): Σ over rows of the weight
  if (p.weights) acc.assign(static_cast<size_t>(p.group * n_keys), 0.0f);

  for (int32_t r = 0; r < p.n_rows; ++r) {
    const int64_t visible =
        p.causal_offset < 0 ? n_keys : std::min<int64_t>(n_keys, p.causal_offset + r + 1);
    for (int32_t g = 0; g < p.group; ++g) {
      const T* qg = p.q + r * p.q_row_stride + static_cast<int64_t>(g) * d;
      for (int32_t i = 0; i < d; ++i) q[i] = detail::to_float(qg[i]) * p.sm_scale;
      float* o = p.o + r * p.o_row_stride + static_cast<int64_t>(g) * d;
      float& lse = p.lse[r * p.lse_row_stride + g];
      std::fill(o, o + d, 0.0f);
      if (visible == 0) {
        lse = -std::numeric_limits<float>::infinity();
        continue;
      }
      // Pass 1: scores of the visible keys, segment by segment.
      float m = -std::numeric_limits<float>::infinity();
      int64_t j = 0;
      for (const auto& seg : p.segments) {
        for (int64_t t = 0; t < seg.n && j < visible; ++t, ++j) {
          scores[j] = dot(q.data(), seg.k + t * seg.stride, d);
          m = std::max(m, scores[j]);
        }
      }
      float sum = 0.0f;
      for (int64_t t = 0; t < visible; ++t) {
        scores[t] = std::exp(scores[t] - m);
        sum += scores[t];
      }
      // Pass 2: weighted values.
      const float inv = 1.0f / sum;
      j = 0;
      for (const auto& seg : p.segments) {
        for (int64_t t = 0; t < seg.n && j < visible; ++t, ++j) {
          axpy(scores[j] * inv, seg.v + t * seg.stride, o, d);
        }
      }
      lse = m + std::log(sum);
      if (p.weights) {
        float* a = acc.data() + static_cast<int64_t>(g) * n_keys;
        for (int64_t t = 0; t < visible; ++t) a[t] += scores[t] * inv;
      }
    }
  }
  if (p.weights) {
    const float inv_rows = 1.0f / static_cast<float>(p.n_rows);
    for (int64_t t = 0; t < n_keys; ++t) {
      float best = acc[t];
      for (int32_t g = 1; g < p.group; ++g) best = std::max(best, acc[g * n_keys + t]);
      p.weights[t] = best * inv_rows;
    }
  }
}

template void attend_group<float>(const GroupAttentionParams<float>&);
template void attend_group<detail::bf16_t>(const GroupAttentionParams<detail::bf16_t>&);
template void attend_group<detail::fp16_t>(const GroupAttentionParams<detail::fp16_t>&);

}  // namespace hgca::cpu
