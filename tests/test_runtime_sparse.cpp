// The method with real selection (beta > 0) against fp64. Each call's output is attention over the
// context set S the store held before the call and over the rest of the history (the window and the
// new tokens, causally): dense over the window, sparse over S, merged by LSE (DESIGN.md, "One
// attention call"). A re-evaluation's S is what the appended queries' fp64 weights over the store
// select (HGCA §3.2.2). S and the window's extent are read from the runtime; the arithmetic and the
// selection rule are the reference's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "runtime_base.hpp"

namespace hgca {
namespace {

Options sparse_options() {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = 8;
  o.n_kv_heads = 2;  // G = 4
  o.head_dim = 16;
  o.dtype = DType::kFloat32;  // the comparison then sees the method, not 16-bit rounding
  o.window_blocks = 2;
  o.block_tokens = 4;  // W = 8: most of the history is in the store
  o.alpha = 0.5f;
  o.beta = 1.0f;  // above-average weight: S is a strict subset of the store
  o.min_keep = 0;
  o.heads_per_task = 1;
  o.reeval_min_tokens = 6;
  o.deterministic = true;  // a re-evaluation is published by the call that starts it
  o.threads = 2;
  return o;
}

/// What the store of (sequence, layer) holds before a call: its size m (history [0, m) left the
/// window) and S per KV head, as store indices.
struct StoreView {
  int64_t size = 0;
  std::vector<std::vector<uint32_t>> context;
};

StoreView view(Runtime& rt, SeqId id, int32_t layer) {
  const kvmgr::DramStore* store = nullptr;
  const Status s = dynamic_cast<RuntimeBase&>(rt).store(id, layer, &store);
  EXPECT_TRUE(s.is_ok()) << s.message();
  StoreView v;
  if (!store) return v;
  v.size = store->size();
  for (int32_t h = 0; h < store->n_kv_heads(); ++h) {
    const auto& idx = store->store(h).context.indices;
    v.context.emplace_back(idx.begin(), idx.end());
  }
  return v;
}

/// fp64 output [n, Hq, D] and LSE [n, Hq] of a sequence's n new rows `q` (the history's last n,
/// of len) over S (per KV head) and the history from m on, causally.
void method_reference(const std::vector<double>& q, int64_t n, const std::vector<double>& k_hist,
                      const std::vector<double>& v_hist, int64_t len, const StoreView& before, const Options& o,
                      std::vector<double>& out, std::vector<double>& lse) {
  const int32_t hq = o.n_q_heads, hkv = o.n_kv_heads, d = o.head_dim, g = hq / hkv;
  const double sm_scale = 1.0 / std::sqrt(double(d));
  out.assign(static_cast<std::size_t>(n * hq * d), 0.0);
  lse.assign(static_cast<std::size_t>(n * hq), 0.0);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t p = len - n + r;  // this row's position
    for (int32_t h = 0; h < hkv; ++h) {
      std::vector<int64_t> keys(before.context[h].begin(), before.context[h].end());
      for (int64_t j = before.size; j <= p; ++j) keys.push_back(j);
      std::vector<double> k, v, qg(q.begin() + (r * hq + h * g) * d, q.begin() + (r * hq + h * g + g) * d), o_set,
          lse_set;
      for (int64_t j : keys) {
        k.insert(k.end(), k_hist.begin() + (j * hkv + h) * d, k_hist.begin() + (j * hkv + h + 1) * d);
        v.insert(v.end(), v_hist.begin() + (j * hkv + h) * d, v_hist.begin() + (j * hkv + h + 1) * d);
      }
      ref::attention_over_set(qg, 1, g, k, v, static_cast<int64_t>(keys.size()), d, sm_scale, o_set, lse_set);
      std::copy(o_set.begin(), o_set.end(), out.begin() + (r * hq + h * g) * d);
      std::copy(lse_set.begin(), lse_set.end(), lse.begin() + r * hq + h * g);
    }
  }
}

TEST(SparseMethod, OutputIsAttentionOverSAndTheWindow) {
  const Options o = sparse_options();
  test::Harness h(o, 5);
  const std::vector<SeqId> ids{1, 2};
  h.add(1);
  h.add(2);
  // A prefill longer than the window, decode steps, an append that re-evaluates, decode again.
  std::vector<std::vector<int32_t>> steps{{30, 13}};
  for (int i = 0; i < 12; ++i) steps.push_back({1, 1});
  steps.push_back({9, 1});
  for (int i = 0; i < 6; ++i) steps.push_back({1, 2});
  int64_t sparse_calls = 0;  // calls where S was a non-empty strict subset of the store
  for (std::size_t step = 0; step < steps.size(); ++step) {
    std::map<std::pair<SeqId, int32_t>, StoreView> before;
    for (SeqId id : ids) {
      for (int32_t l = 0; l < o.n_layers; ++l) before[{id, l}] = view(h.runtime(), id, l);
    }
    const std::vector<test::StepResult> results = h.step(ids, steps[step]);
    ASSERT_EQ(results.size(), static_cast<std::size_t>(o.n_layers));
    for (int32_t l = 0; l < o.n_layers; ++l) {
      int64_t row = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const int64_t n = steps[step][i], rows = n * o.n_q_heads;
        const std::vector<double>& k = h.k_history(ids[i], l);
        const int64_t len = static_cast<int64_t>(k.size()) / (o.n_kv_heads * o.head_dim);
        const StoreView& b = before[{ids[i], l}];
        for (const auto& set : b.context) {
          sparse_calls += !set.empty() && static_cast<int64_t>(set.size()) < b.size;
        }
        const std::vector<double> q(results[l].q.begin() + row * o.head_dim,
                                    results[l].q.begin() + (row + rows) * o.head_dim);
        std::vector<double> ref_out, ref_lse;
        method_reference(q, n, k, h.v_history(ids[i], l), len, b, o, ref_out, ref_lse);
        const std::vector<double> out(results[l].out.begin() + row * o.head_dim,
                                      results[l].out.begin() + (row + rows) * o.head_dim);
        EXPECT_LE(ref::relative_error(out, ref_out), 1e-5) << "step " << step << " layer " << l << " seq " << ids[i];
        for (int64_t x = 0; x < rows; ++x) {
          EXPECT_NEAR(results[l].lse[row + x], ref_lse[x], 1e-5 * std::max(1.0, std::abs(ref_lse[x])))
              << "step " << step << " layer " << l << " seq " << ids[i] << " row " << x;
        }
        row += rows;
      }
    }
  }
  EXPECT_GT(sparse_calls, 0) << "S was never a non-empty strict subset: the test would not see the selection";
}

TEST(SparseMethod, ReevaluationSelectsWhatTheAppendedQueriesWeigh) {
  const Options o = sparse_options();
  test::Harness h(o, 9);
  h.add(1);
  h.step({1}, {24});
  for (int i = 0; i < 10; ++i) h.step({1}, {1});
  const int32_t hq = o.n_q_heads, hkv = o.n_kv_heads, d = o.head_dim, g = hq / hkv;
  std::vector<StoreView> before;
  for (int32_t l = 0; l < o.n_layers; ++l) before.push_back(view(h.runtime(), 1, l));
  const int32_t n = 8;  // ≥ reeval_min_tokens
  const std::vector<test::StepResult> results = h.step({1}, {n});
  int64_t changed = 0, judged = 0;
  for (int32_t l = 0; l < o.n_layers; ++l) {
    const int64_t m0 = before[l].size;  // the store the re-evaluation judges: as it was before the call
    ASSERT_GT(m0, 0);
    const StoreView after = view(h.runtime(), 1, l);
    const std::vector<double>& k_hist = h.k_history(1, l);
    for (int32_t kh = 0; kh < hkv; ++kh) {
      std::vector<double> q, k;
      for (int32_t r = 0; r < n; ++r) {
        q.insert(q.end(), results[l].q.begin() + (r * hq + kh * g) * d, results[l].q.begin() + (r * hq + kh * g + g) * d);
      }
      for (int64_t j = 0; j < m0; ++j) {
        k.insert(k.end(), k_hist.begin() + (j * hkv + kh) * d, k_hist.begin() + (j * hkv + kh + 1) * d);
      }
      const std::vector<double> a = ref::maw_observation(q, n, g, k, m0, d, 1.0 / std::sqrt(double(d)), -1);
      const std::set<uint32_t> in_s(after.context[kh].begin(), after.context[kh].end());
      const std::set<uint32_t> was(before[l].context[kh].begin(), before[l].context[kh].end());
      for (int64_t j = 0; j < m0; ++j) {
        const double relative = a[j] * static_cast<double>(m0) / o.beta;  // > 1: selected
        if (std::abs(relative - 1.0) < 1e-4) continue;  // too close to the threshold for fp32 weights
        const bool selected = relative > 1.0;
        ++judged;
        changed += selected != was.contains(static_cast<uint32_t>(j));
        EXPECT_EQ(in_s.contains(static_cast<uint32_t>(j)), selected)
            << "layer " << l << " KV head " << kh << " entry " << j << " of " << m0 << ": maw " << a[j]
            << ", threshold " << o.beta / static_cast<double>(m0);
      }
    }
  }
  EXPECT_GT(judged, 0);
  EXPECT_GT(changed, 0) << "the re-evaluation selected what S held before: the test would not see it";
}

}  // namespace
}  // namespace hgca
