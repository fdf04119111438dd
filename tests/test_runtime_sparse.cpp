// The method with real selection (beta > 0) against fp64. Each call's output is attention over the
// context set S the store held before the call and over the rest of the history (the window and the
// new tokens, causally): dense over the window, sparse over S, merged by LSE (DESIGN.md, "One
// attention call"); there S and the window's extent are read from the runtime. A re-evaluation's S
// is what the appended queries' fp64 weights over the store select (HGCA §3.2.2). And an fp64 model
// of the whole method (MAW tracking, eviction, selection, re-evaluation) holds, call after call, the
// store the runtime holds: each entry's MAW and n_ref, and S.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
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

/// The DRAM store of (id, layer) once the runtime's work so far has run; null (and a failure) if
/// the runtime reports an error.
const kvmgr::DramStore* view_store(Runtime& rt, SeqId id, int32_t layer) {
  const kvmgr::DramStore* store = nullptr;
  const Status s = dynamic_cast<RuntimeBase&>(rt).store(id, layer, &store);
  if (!s) ADD_FAILURE() << s.message();
  return s ? store : nullptr;
}

StoreView view(Runtime& rt, SeqId id, int32_t layer) {
  StoreView v;
  const kvmgr::DramStore* store = view_store(rt, id, layer);
  if (!store) return v;
  v.size = store->size();
  for (int32_t h = 0; h < store->n_kv_heads(); ++h) {
    const auto& idx = store->store(h).context.indices;
    v.context.emplace_back(idx.begin(), idx.end());
  }
  return v;
}

/// KV head h's rows of a token-major history [len, Hkv, D] at `tokens`, as [tokens, D].
std::vector<double> head_rows(const std::vector<double>& hist, int32_t hkv, int32_t d, int32_t h,
                              const std::vector<int64_t>& tokens) {
  std::vector<double> rows;
  for (int64_t j : tokens) {
    rows.insert(rows.end(), hist.begin() + (j * hkv + h) * d, hist.begin() + (j * hkv + h + 1) * d);
  }
  return rows;
}

/// The positions [from, to).
std::vector<int64_t> positions(int64_t from, int64_t to) {
  std::vector<int64_t> p;
  for (int64_t j = from; j < to; ++j) p.push_back(j);
  return p;
}

/// The query rows of KV head h's group (G = hq / hkv heads) in q [n, Hq, D], as [n, G, D].
std::vector<double> group_rows(const std::vector<double>& q, int64_t n, int32_t hq, int32_t g, int32_t d, int32_t h) {
  std::vector<double> rows;
  for (int64_t r = 0; r < n; ++r) {
    rows.insert(rows.end(), q.begin() + (r * hq + h * g) * d, q.begin() + (r * hq + h * g + g) * d);
  }
  return rows;
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
      const std::vector<double> qg(q.begin() + (r * hq + h * g) * d, q.begin() + (r * hq + h * g + g) * d);
      std::vector<double> o_set, lse_set;
      ref::attention_over_set(qg, 1, g, head_rows(k_hist, hkv, d, h, keys), head_rows(v_hist, hkv, d, h, keys),
                              static_cast<int64_t>(keys.size()), d, sm_scale, o_set, lse_set);
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
        ASSERT_EQ(b.context.size(), static_cast<std::size_t>(o.n_kv_heads));
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
    ASSERT_EQ(after.context.size(), static_cast<std::size_t>(hkv));
    ASSERT_EQ(before[l].context.size(), static_cast<std::size_t>(hkv));
    const std::vector<double>& k_hist = h.k_history(1, l);
    for (int32_t kh = 0; kh < hkv; ++kh) {
      const std::vector<double> a = ref::maw_observation(group_rows(results[l].q, n, hq, g, d, kh), n, g,
                                                         head_rows(k_hist, hkv, d, kh, positions(0, m0)), m0, d,
                                                         1.0 / std::sqrt(double(d)), -1);
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

/// The method in fp64 for one (sequence, layer), as DESIGN.md's "One attention call" states it:
/// each call tracks the MAW of the window's entries ((1 − alpha)·maw + alpha·a, a new entry starting
/// at its first a; a = the dense softmax weight over window ∪ new, causal, mean over the rows, max
/// over the group), evicts the fewest whole blocks that make room (oldest first, with n_ref = the
/// keys that softmax covered), admits each evicted entry with maw > beta / n_ref, tops S up to
/// min_keep with the entries of highest maw · n_ref (ties: the older), and pads the KV heads of one
/// task (heads_per_task) to the longest S among them the same way (HGCA §3.3). After an append of
/// ≥ reeval_min_tokens it re-evaluates the store as it was before the call: the appended queries'
/// weights over it become its MAW (n_ref = its size) and S is chosen anew.
class MethodModel {
 public:
  explicit MethodModel(const Options& o) : o_(o), heads_(static_cast<std::size_t>(o.n_kv_heads)) {}

  /// One call: the n new rows' queries q [n, Hq, D]; k_hist [len, Hkv, D] holds the new tokens last.
  void call(const std::vector<double>& q, int64_t n, const std::vector<double>& k_hist) {
    const int32_t hq = o_.n_q_heads, hkv = o_.n_kv_heads, d = o_.head_dim, g = hq / hkv;
    const double sm_scale = 1.0 / std::sqrt(double(d)), alpha = o_.alpha;
    const int64_t w = window_, m = store_, capacity = int64_t{o_.window_blocks} * o_.block_tokens;
    ASSERT_EQ(static_cast<int64_t>(k_hist.size()) / (hkv * d), m + w + n);
    const int64_t over = w + n - capacity;
    const int64_t evict = over <= 0 ? 0 : (over + o_.block_tokens - 1) / o_.block_tokens * o_.block_tokens;
    const bool reevaluate = n >= o_.reeval_min_tokens && m > 0;
    for (int32_t h = 0; h < hkv; ++h) {
      Head& head = heads_[static_cast<std::size_t>(h)];
      head.ambiguous.assign(head.maw.size() + static_cast<std::size_t>(evict), false);
      const std::vector<double> qh = group_rows(q, n, hq, g, d, h);
      const auto keys = [&](int64_t from, int64_t to) { return head_rows(k_hist, hkv, d, h, positions(from, to)); };
      const std::vector<double> a = ref::maw_observation(qh, n, g, keys(m, m + w + n), w + n, d, sm_scale, w);
      for (int64_t i = 0; i < w; ++i) head.window[i] = (1 - alpha) * head.window[i] + alpha * a[i];
      for (int64_t i = 0; i < n; ++i) head.window.push_back(a[w + i]);
      for (int64_t i = 0; i < evict; ++i) {
        head.maw.push_back(head.window[i]);
        head.n_ref.push_back(w + n);
        head.in_s.push_back(false);
      }
      head.window.erase(head.window.begin(), head.window.begin() + evict);
      if (reevaluate) {
        const std::vector<double> weights = ref::maw_observation(qh, n, g, keys(0, m), m, d, sm_scale, -1);
        for (int64_t j = 0; j < m; ++j) {
          head.maw[j] = weights[j];
          head.n_ref[j] = m;
        }
        std::fill(head.in_s.begin(), head.in_s.end(), false);
      }
    }
    // A commit judges the entries it brings; a re-evaluation judges every entry afresh.
    if (evict > 0 || reevaluate) select(reevaluate ? 0 : m);
    window_ = w + n - evict;
    store_ = m + evict;
  }

  /// The runtime's store against the model: the same entries, each one's MAW (fp32 against fp64:
  /// 1e-4 relative) and n_ref, and S. An entry within 1e-4 of the threshold, or of the cut of a
  /// top-up, may fall either way in fp32: the model takes the runtime's decision for it. Adds the
  /// entries judged to `*judged`. Fatal on the first difference.
  void expect_equal(const kvmgr::DramStore& store, const std::string& where, int64_t* judged) {
    ASSERT_EQ(store.size(), store_) << where;
    for (int32_t h = 0; h < o_.n_kv_heads; ++h) {
      Head& head = heads_[static_cast<std::size_t>(h)];
      const kvmgr::HeadStore& rt = store.store(h);
      for (int64_t j = 0; j < store_; ++j) {
        const double maw = head.maw[j];
        ASSERT_NEAR(rt.maw[j], maw, 1e-4 * std::max(maw, 1e-3)) << where << " KV head " << h << " entry " << j;
        ASSERT_EQ(rt.n_ref[j], head.n_ref[j]) << where << " KV head " << h << " entry " << j;
        const bool in_s = j < static_cast<int64_t>(rt.context.member.size()) && rt.context.member[j];
        if (j < static_cast<int64_t>(head.ambiguous.size()) && head.ambiguous[j]) {
          head.in_s[j] = in_s;
          continue;
        }
        ++*judged;
        ASSERT_EQ(in_s, head.in_s[j]) << where << " KV head " << h << " entry " << j << ": maw " << maw << ", n_ref "
                                      << head.n_ref[j];
      }
    }
  }

  int64_t store_size() const { return store_; }
  int64_t selected() const {
    int64_t n = 0;
    for (const Head& head : heads_) n += std::count(head.in_s.begin(), head.in_s.end(), true);
    return n;
  }
  /// Entries of S that no threshold admitted: min_keep's and the padding's.
  int64_t topped_up() const { return topped_up_; }

 private:
  struct Head {
    std::vector<double> window;  // MAW of the window's entries, oldest first
    std::vector<double> maw;     // the store's entries
    std::vector<int64_t> n_ref;
    std::vector<bool> in_s;
    std::vector<bool> ambiguous;  // this call's decisions that fp32 may take the other way
    int64_t size() const { return std::count(in_s.begin(), in_s.end(), true); }
  };

  static bool near(double a, double b) { return std::abs(a - b) <= 1e-4 * std::max(std::abs(a), std::abs(b)); }

  void select(int64_t from) {
    const int32_t run = std::max(o_.heads_per_task, 1);
    for (int32_t first = 0; first < o_.n_kv_heads; first += run) {
      const int32_t last = std::min(o_.n_kv_heads, first + run);
      int64_t target = 0;
      for (int32_t h = first; h < last; ++h) {
        Head& head = heads_[static_cast<std::size_t>(h)];
        for (std::size_t j = static_cast<std::size_t>(from); j < head.maw.size(); ++j) {
          const double relative = head.maw[j] * double(head.n_ref[j]);
          if (relative > o_.beta) head.in_s[j] = true;
          if (near(relative, o_.beta)) head.ambiguous[j] = true;
        }
        top_up(head, o_.min_keep);
        target = std::max(target, head.size());
      }
      for (int32_t h = first; h < last; ++h) top_up(heads_[static_cast<std::size_t>(h)], target);
    }
  }

  /// Adds the non-members of highest maw · n_ref (ties: the older) until S holds min(target, size).
  void top_up(Head& head, int64_t target) {
    const int64_t need = std::min<int64_t>(target, static_cast<int64_t>(head.maw.size())) - head.size();
    if (need <= 0) return;
    std::vector<std::size_t> candidates;
    for (std::size_t j = 0; j < head.maw.size(); ++j) {
      if (!head.in_s[j]) candidates.push_back(j);
    }
    const auto relative = [&](std::size_t j) { return head.maw[j] * double(head.n_ref[j]); };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](std::size_t x, std::size_t y) { return relative(x) > relative(y); });
    for (int64_t i = 0; i < need; ++i) head.in_s[candidates[i]] = true;
    topped_up_ += need;
    // Where the last taken and the first left nearly tie, fp32 may order the entries at the cut otherwise.
    if (need < static_cast<int64_t>(candidates.size())) {
      const double taken = relative(candidates[need - 1]), left = relative(candidates[need]);
      for (std::size_t j : candidates) {
        if (near(taken, left) && (near(relative(j), taken) || near(relative(j), left))) head.ambiguous[j] = true;
      }
    }
  }

  Options o_;
  std::vector<Head> heads_;
  int64_t window_ = 0, store_ = 0, topped_up_ = 0;
};

struct ModelCase {
  int32_t min_keep, heads_per_task;
};

class SparseMethodModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(SparseMethodModel, MawAndSelectionFollowTheFp64Method) {
  Options o = sparse_options();
  o.alpha = 0.3f;
  o.n_kv_heads = 4;  // G = 2; two tasks of two heads when padded
  o.min_keep = GetParam().min_keep;
  o.heads_per_task = GetParam().heads_per_task;
  test::Harness h(o, 21);
  h.add(1);
  std::vector<MethodModel> model(static_cast<std::size_t>(o.n_layers), MethodModel(o));
  // A prefill past the window, decode steps, an append that re-evaluates, a short append (several
  // rows, no re-evaluation), decode again.
  std::vector<int32_t> steps{20};
  steps.insert(steps.end(), 25, 1);
  steps.push_back(9);
  steps.insert(steps.end(), 8, 1);
  steps.push_back(3);
  steps.insert(steps.end(), 6, 1);
  int64_t judged = 0;
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const std::vector<test::StepResult> results = h.step({1}, {steps[step]});
    for (int32_t l = 0; l < o.n_layers; ++l) {
      ASSERT_NO_FATAL_FAILURE(model[l].call(results[l].q, steps[step], h.k_history(1, l)));
      const kvmgr::DramStore* store = view_store(h.runtime(), 1, l);
      ASSERT_NE(store, nullptr);
      ASSERT_NO_FATAL_FAILURE(model[l].expect_equal(*store, fmt::format("step {} layer {}", step, l), &judged));
    }
  }
  EXPECT_GT(judged, 0);
  for (const MethodModel& m : model) {
    // Selection was real: S held some of the store, not all of it.
    EXPECT_GT(m.selected(), 0);
    EXPECT_LT(m.selected(), m.store_size() * o.n_kv_heads);
    // min_keep and the padding had work to do where they are on.
    if (o.min_keep > 0 || o.heads_per_task > 1) {
      EXPECT_GT(m.topped_up(), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SparseMethodModel,
                         ::testing::Values(ModelCase{0, 1}, ModelCase{24, 1}, ModelCase{0, 2}, ModelCase{2, 2}),
                         [](const ::testing::TestParamInfo<ModelCase>& c) {
                           return fmt::format("min_keep_{}_heads_per_task_{}", c.param.min_keep, c.param.heads_per_task);
                         });

}  // namespace
}  // namespace hgca
