// Dense attention of one GQA group on the host, on the sparse engine's SIMD kernels.
#include "cpu/attention_host.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "dtype.hpp"

namespace hgca::cpu {

template <typename T>
void attend_group(const GroupAttentionParams<T>& p, SparseIsa isa) {
  int64_t n_keys = 0;
  for (const auto& seg : p.segments) n_keys += seg.n;
  const int32_t d = p.head_dim;
  const DType dtype = detail::dtype_of<T>();
  // The keys' rows contiguous, as the kernels read them (the window's rows are Hkv heads apart).
  std::vector<T> k(static_cast<std::size_t>(n_keys) * d), v(k.size());
  int64_t j = 0;
  for (const auto& seg : p.segments) {
    for (int64_t t = 0; t < seg.n; ++t, ++j) {
      std::memcpy(k.data() + j * d, seg.k + t * seg.stride, d * sizeof(T));
      std::memcpy(v.data() + j * d, seg.v + t * seg.stride, d * sizeof(T));
    }
  }
  std::vector<float> acc, work;  // per (g, key): Σ over rows of the weight
  if (p.weights) {
    acc.assign(static_cast<std::size_t>(p.group) * n_keys, 0.0f);
    work.resize(static_cast<std::size_t>(arch::weights_work_floats(p.causal_offset < 0 ? p.n_rows : 1, p.group, d, n_keys)));
  }
  // Every row together when all see every key; else row by row, each over the keys it sees.
  const int32_t step = p.causal_offset < 0 ? p.n_rows : 1;
  for (int32_t r = 0; r < p.n_rows; r += step) {
    const int64_t visible = p.causal_offset < 0 ? n_keys : std::min<int64_t>(n_keys, p.causal_offset + r + 1);
    const arch::KvRun run{k.data(), v.data(), visible};
    arch::QueriesOverKeys in;
    in.n = visible;
    in.runs = &run;
    in.n_runs = 1;
    in.q = p.q + r * p.q_row_stride;
    in.q_row_stride = p.q_row_stride;
    in.n_rows = step;
    in.group = p.group;
    in.head_dim = d;
    in.sm_scale = p.sm_scale;
    arch::UnitParams u{in};
    u.o = p.o + r * p.o_row_stride;
    u.o_row_stride = p.o_row_stride;
    u.lse = p.lse + r * p.lse_row_stride;
    u.lse_row_stride = p.lse_row_stride;
    attend_unit(isa, dtype, u);  // no key seen: o = 0, lse = -inf
    if (p.weights && visible > 0) {
      arch::WeightsParams w{in};
      w.acc = acc.data();
      w.acc_stride = n_keys;
      w.work = work.data();
      add_key_weights(isa, dtype, w);
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

template void attend_group<float>(const GroupAttentionParams<float>&, SparseIsa);
template void attend_group<detail::bf16_t>(const GroupAttentionParams<detail::bf16_t>&, SparseIsa);
template void attend_group<detail::fp16_t>(const GroupAttentionParams<detail::fp16_t>&, SparseIsa);

}  // namespace hgca::cpu
