// Selection on hand-computed cases: MAW tracking, the beta / n_ref threshold, min_keep, the GQA max
// rule, padding of merged heads, the context cache, and re-evaluation after an append.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <cstring>
#include <limits>
#include <random>

#include "cpu/attention_host.hpp"
#include "harness.hpp"
#include "kvmgr/reevaluation.hpp"
#include "kvmgr/selection.hpp"
#include "kvmgr/store.hpp"
#include "reference/reference.hpp"
#include "store_memory_fixture.hpp"

namespace hgca {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr int32_t kD = 8;

// Token-major K rows [n, hkv, D] whose values name token, head and element: t*100 + h*10 + i.
std::vector<float> named_rows(int64_t first_token, int64_t n, int32_t hkv) {
  std::vector<float> rows;
  for (int64_t t = first_token; t < first_token + n; ++t)
    for (int32_t h = 0; h < hkv; ++h)
      for (int32_t i = 0; i < kD; ++i) rows.push_back(static_cast<float>(t * 100 + h * 10 + i));
  return rows;
}

void commit(kvmgr::SequenceKv& kv, int64_t first_token, int64_t n,
            const std::vector<std::vector<float>>& weights, float alpha,
            const kvmgr::SelectionParams& sel) {
  const auto rows = named_rows(first_token, n, kv.n_kv_heads());
  std::vector<float> v_rows(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) v_rows[i] = -rows[i];
  std::vector<const float*> w;
  for (const auto& x : weights) w.push_back(x.data());
  kv.commit(reinterpret_cast<const std::byte*>(rows.data()),
            reinterpret_cast<const std::byte*>(v_rows.data()), n, w, alpha, sel);
}

float first_k(const std::byte* row) {
  float x;
  std::memcpy(&x, row, sizeof x);
  return x;
}

// Window of 2 blocks × 2 tokens, 2 KV heads, alpha = 0.5, beta = 1.
//   call 1: 4 new tokens, a = h0 [.4 .1 .3 .2], h1 [.1 .1 .1 .7]; nothing leaves.
//   call 2: 2 new tokens over 4 + 2 = 6 entries (n_ref 6, threshold 1/6),
//           a = h0 [.2 .3 .1 .1 .2 .1], h1 [0 .2 .1 .3 .2 .2].
//   Tokens 0 and 1 leave with MAW h0 [.3 .2] (both pass), h1 [.05 .15] (none passes).
class HandCase : public ::testing::TestWithParam<int> {};

kvmgr::SequenceKv run_hand_case(const kvmgr::SelectionParams& sel) {
  kvmgr::SequenceKv kv(4, 2, 2, kD, sizeof(float), test::store_memory(), 0);
  commit(kv, 0, 4, {{.4f, .1f, .3f, .2f}, {.1f, .1f, .1f, .7f}}, 0.5f, sel);
  EXPECT_EQ(kv.store_size(), 0);
  EXPECT_EQ(kv.evict_count(2), 2);
  commit(kv, 4, 2, {{.2f, .3f, .1f, .1f, .2f, .1f}, {0.f, .2f, .1f, .3f, .2f, .2f}}, 0.5f, sel);
  return kv;
}

TEST(Selection, ThresholdIsBetaOverNref) {
  EXPECT_TRUE(kvmgr::passes_threshold(0.17f, 6, 1.0f));
  EXPECT_FALSE(kvmgr::passes_threshold(0.16f, 6, 1.0f));
  EXPECT_FALSE(kvmgr::passes_threshold(0.25f, 4, 1.0f));  // strictly greater
  EXPECT_TRUE(kvmgr::passes_threshold(0.26f, 4, 1.0f));
  EXPECT_TRUE(kvmgr::passes_threshold(0.0f, 4, 0.0f));    // beta = 0 keeps everything
  EXPECT_FALSE(kvmgr::passes_threshold(0.3f, 4, 2.0f));   // 2 / 4 = 0.5
  EXPECT_FLOAT_EQ(kvmgr::update_maw(0.4f, 0.2f, 0.5f), 0.3f);
  EXPECT_FLOAT_EQ(kvmgr::update_maw(0.4f, 0.2f, 0.25f), 0.35f);
}

TEST(Selection, HandCaseMawEvictionAndThreshold) {
  const auto kv = run_hand_case({1.0f, 0, 1});
  ASSERT_EQ(kv.store_size(), 2);
  const auto& h0 = kv.store(0);
  const auto& h1 = kv.store(1);
  EXPECT_FLOAT_EQ(h0.maw[0], 0.3f);
  EXPECT_FLOAT_EQ(h0.maw[1], 0.2f);
  EXPECT_FLOAT_EQ(h1.maw[0], 0.05f);
  EXPECT_FLOAT_EQ(h1.maw[1], 0.15f);
  EXPECT_THAT(h0.n_ref, ElementsAre(6u, 6u));
  EXPECT_THAT(h0.context.indices, ElementsAre(0u, 1u));
  EXPECT_TRUE(h1.context.indices.empty());
  // The window keeps tokens 2..5; their MAW: old entries blended, new ones at their first weight.
  const auto& w = kv.window();
  ASSERT_EQ(w.size(), 4);
  const float expect_h0[] = {.2f, .15f, .2f, .1f}, expect_h1[] = {.1f, .5f, .2f, .2f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(first_k(w.k(w.slot(i))), static_cast<float>((2 + i) * 100));
    EXPECT_FLOAT_EQ(w.maw(0, w.slot(i)), expect_h0[i]) << i;
    EXPECT_FLOAT_EQ(w.maw(1, w.slot(i)), expect_h1[i]) << i;
  }
  // The store holds tokens 0 and 1 per head; the context cache holds S's K/V contiguously.
  EXPECT_EQ(first_k(kv.store_k(1, 1)), 110.0f);
  ASSERT_EQ(h0.context_cache.rows(), 2);
  EXPECT_EQ(first_k(h0.context_cache.k()), 0.0f);
  EXPECT_EQ(first_k(h0.context_cache.k() + kD * sizeof(float)), 100.0f);
  EXPECT_EQ(first_k(h0.context_cache.v() + kD * sizeof(float)), -100.0f);
}

TEST(Selection, MinKeepTakesTheHighestMaw) {
  const auto kv = run_hand_case({1.0f, 1, 1});
  EXPECT_THAT(kv.store(0).context.indices, ElementsAre(0u, 1u));  // already ≥ 1
  EXPECT_THAT(kv.store(1).context.indices, ElementsAre(1u));      // 0.15 > 0.05
  EXPECT_EQ(first_k(kv.store(1).context_cache.k()), 110.0f);
}

TEST(Selection, MergedHeadsArePaddedToEqualLength) {
  const auto kv = run_hand_case({1.0f, 0, 2});
  EXPECT_THAT(kv.store(0).context.indices, ElementsAre(0u, 1u));
  EXPECT_THAT(kv.store(1).context.indices, ElementsAre(1u, 0u));  // padded, best first
}

/// attend_group's outputs for one fp32 GQA group: o, lse and the MAW observations.
struct GroupOutputs {
  std::vector<float> o, lse, weights;
};

/// `rows` query rows of `group` heads at q (rows group·kD apart) over `segments` (n_keys keys),
/// scale 0.35, row r seeing keys [0, causal + r + 1) (causal < 0: all).
GroupOutputs attend_fp32(const std::vector<float>& q, int32_t rows, int32_t group,
                         std::span<const cpu::KvSegment<float>> segments, int64_t n_keys, int64_t causal) {
  GroupOutputs out{std::vector<float>(rows * group * kD), std::vector<float>(rows * group), std::vector<float>(n_keys)};
  cpu::GroupAttentionParams<float> p;
  p.q = q.data();
  p.q_row_stride = group * kD;
  p.n_rows = rows;
  p.group = group;
  p.head_dim = kD;
  p.sm_scale = 0.35f;
  p.segments = segments;
  p.causal_offset = causal;
  p.o = out.o.data();
  p.o_row_stride = group * kD;
  p.lse = out.lse.data();
  p.lse_row_stride = group;
  p.weights = out.weights.data();
  cpu::attend_group(p);
  return out;
}

// Every row over every key (causal_offset < 0: one pass for all rows), the keys in two segments
// whose rows are two heads apart (as a window's): o and lse against the fp64 attention, the
// weights against the fp64 observation.
TEST(Selection, GroupAttentionOverEveryKeyMatchesTheReference) {
  std::mt19937_64 rng(12);
  const int32_t rows = 5, group = 3;
  const int64_t n_keys = 77, first = 30;
  const auto q = ref::round_to(ref::normal(rng, rows * group * kD, 2.0), DType::kFloat32);
  const auto k = ref::round_to(ref::normal(rng, n_keys * kD, 2.0), DType::kFloat32);
  const auto v = ref::round_to(ref::normal(rng, n_keys * kD), DType::kFloat32);
  // Token t's row at 2t·kD (another head's row between), split into two segments.
  std::vector<float> qf(q.begin(), q.end()), kf(2 * n_keys * kD), vf(2 * n_keys * kD);
  for (int64_t t = 0; t < n_keys; ++t) {
    for (int32_t i = 0; i < kD; ++i) kf[2 * t * kD + i] = static_cast<float>(k[t * kD + i]), vf[2 * t * kD + i] = static_cast<float>(v[t * kD + i]);
  }
  const cpu::KvSegment<float> segs[2] = {{kf.data(), vf.data(), first, 2 * kD},
                                         {kf.data() + 2 * first * kD, vf.data() + 2 * first * kD, n_keys - first, 2 * kD}};
  const auto [o, lse, weights] = attend_fp32(qf, rows, group, segs, n_keys, -1);
  std::vector<double> want_o, want_lse;
  ref::attention_over_set(q, rows, group, k, v, n_keys, kD, 0.35, want_o, want_lse);
  for (std::size_t i = 0; i < o.size(); ++i) EXPECT_NEAR(o[i], want_o[i], 1e-5 * std::max(1.0, std::abs(want_o[i]))) << i;
  for (std::size_t i = 0; i < lse.size(); ++i) EXPECT_NEAR(lse[i], want_lse[i], 1e-5 * std::max(1.0, std::abs(want_lse[i]))) << i;
  const auto expect = ref::maw_observation(q, rows, group, k, n_keys, kD, 0.35, -1);
  for (int64_t j = 0; j < n_keys; ++j) EXPECT_NEAR(weights[j], expect[j], 1e-6) << j;
}

TEST(Selection, TopUpPrefersHigherRelativeMawThenOlder) {
  kvmgr::ContextSet set;
  const std::vector<float> maw{0.1f, 0.05f, 0.3f, 0.1f};
  const std::vector<uint32_t> n_ref{10, 40, 2, 10};  // relative MAW 1, 2, 0.6, 1
  kvmgr::top_up(maw, n_ref, 3, set);
  EXPECT_THAT(set.indices, ElementsAre(1u, 0u, 3u));
  kvmgr::top_up(maw, n_ref, 10, set);  // capped at the store size
  EXPECT_THAT(set.indices, ElementsAre(1u, 0u, 3u, 2u));
}

// A NaN MAW (the weights of a non-finite query) ranks below every number, 0 included, then by age:
// compared as it is, the order partial_sort needs would not hold.
TEST(Selection, TopUpRanksNanMawLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> maw{nan, 0.1f, nan, 0.0f, 0.2f, nan, 0.05f};
  const std::vector<uint32_t> n_ref(maw.size(), 10);
  kvmgr::ContextSet set;
  kvmgr::top_up(maw, n_ref, 4, set);
  EXPECT_THAT(set.indices, ElementsAre(4u, 1u, 6u, 3u));
  kvmgr::top_up(maw, n_ref, 7, set);
  EXPECT_THAT(set.indices, ElementsAre(4u, 1u, 6u, 3u, 0u, 2u, 5u));
}

TEST(Selection, GqaObservationIsMaxOverGroupOfMeanOverRows) {
  std::mt19937_64 rng(11);
  const int32_t rows = 3, group = 4;
  const int64_t n_keys = 10, causal = 6;  // row r sees keys [0, 7 + r)
  const auto q = ref::normal(rng, rows * group * kD, 2.0), k = ref::normal(rng, n_keys * kD, 2.0),
             v = ref::normal(rng, n_keys * kD);
  const std::vector<float> qf(q.begin(), q.end()), kf(k.begin(), k.end()), vf(v.begin(), v.end());
  const cpu::KvSegment<float> seg{kf.data(), vf.data(), n_keys, kD};
  const auto weights = attend_fp32(qf, rows, group, std::span(&seg, 1), n_keys, causal).weights;
  const auto expect = ref::maw_observation(q, rows, group, k, n_keys, kD, 0.35f, causal);
  for (int64_t j = 0; j < n_keys; ++j) EXPECT_NEAR(weights[j], expect[j], 1e-6) << j;
  EXPECT_EQ(weights[9], 0.0f);  // no row sees key 9
}

/// Commits `calls` calls of n tokens with random fp32 K rows (the V rows the same) and flat window
/// weights to kv (2 KV heads); the K rows are appended to k_all ([token, Hkv, D]).
void commit_random(kvmgr::SequenceKv& kv, std::mt19937_64& rng, int calls, int64_t n, double scale,
                   const kvmgr::SelectionParams& sel, std::vector<double>& k_all) {
  constexpr int32_t hkv = 2;
  for (int call = 0; call < calls; ++call) {
    const auto k = ref::round_to(ref::normal(rng, n * hkv * kD, scale), DType::kFloat32);
    k_all.insert(k_all.end(), k.begin(), k.end());
    const std::vector<float> kf(k.begin(), k.end());
    std::vector<std::vector<float>> w(hkv, std::vector<float>(kv.window().size() + n, 0.01f));
    std::vector<const float*> wp{w[0].data(), w[1].data()};
    kv.commit(reinterpret_cast<const std::byte*>(kf.data()), reinterpret_cast<const std::byte*>(kf.data()),
              n, wp, 0.5f, sel);
  }
}

TEST(Selection, ReevaluationReselectsFromTheAppendedQueriesWeights) {
  // 8 store entries with random K, then 3 appended query rows over 2 KV heads × group 2.
  std::mt19937_64 rng(5);
  const int32_t hkv = 2, hq = 4;
  kvmgr::SequenceKv kv(4, 2, hkv, kD, sizeof(float), test::store_memory(), 0);
  const kvmgr::SelectionParams sel{1.0f, 0, 1};
  std::vector<double> k_all;
  commit_random(kv, rng, 6, 2, 3.0, sel, k_all);
  ASSERT_EQ(kv.store_size(), 8);
  const auto q = ref::round_to(ref::normal(rng, 3 * hq * kD, 3.0), DType::kFloat32);
  const std::vector<float> qf(q.begin(), q.end());
  auto job = kvmgr::snapshot_for_reevaluation(kv.dram(), reinterpret_cast<const std::byte*>(qf.data()), 3, hq,
                                              kD, 0.35f, DType::kFloat32);
  kvmgr::run_reevaluation(*job);
  ASSERT_TRUE(job->done);
  kv.apply_reevaluation(job->weights, sel);
  for (int32_t h = 0; h < hkv; ++h) {
    std::vector<double> kh, qh;
    for (int64_t t = 0; t < 8; ++t) kh.insert(kh.end(), k_all.begin() + (t * hkv + h) * kD, k_all.begin() + (t * hkv + h + 1) * kD);
    for (int64_t r = 0; r < 3; ++r) qh.insert(qh.end(), q.begin() + (r * hq + h * 2) * kD, q.begin() + (r * hq + h * 2 + 2) * kD);
    const auto a = ref::maw_observation(qh, 3, 2, kh, 8, kD, 0.35, -1);
    std::vector<uint32_t> expect;
    for (uint32_t j = 0; j < 8; ++j) {
      EXPECT_NEAR(kv.store(h).maw[j], a[j], 1e-6);
      EXPECT_EQ(kv.store(h).n_ref[j], 8u);
      ASSERT_GT(std::abs(a[j] - 1.0 / 8), 1e-4) << "borderline draw; change the seed";
      if (a[j] > 1.0 / 8) expect.push_back(j);
    }
    EXPECT_THAT(kv.store(h).context.indices, ::testing::ElementsAreArray(expect)) << "head " << h;
    EXPECT_FALSE(expect.empty());
    EXPECT_LT(expect.size(), 8u) << "the draw should not select everything";
  }

  // A re-evaluation whose weights cannot be had (4 PiB of them) is dropped, not thrown: it runs
  // on background threads, where an exception would end the process. (AddressSanitizer ends the
  // process itself on a request that large instead of throwing std::bad_alloc.)
#if !defined(__SANITIZE_ADDRESS__)
  auto huge = kvmgr::snapshot_for_reevaluation(kv.dram(), reinterpret_cast<const std::byte*>(qf.data()), 3, hq,
                                               kD, 0.35f, DType::kFloat32);
  huge->store_size = int64_t{1} << 50;
  EXPECT_NO_THROW(kvmgr::run_reevaluation(*huge));
  EXPECT_FALSE(huge->done);
#endif
}

// A long append's rows run in chunks (tasks beyond the KV heads) whose sums add up in order: the
// weights match the reference and are the same bits at 1 and 2 threads.
TEST(Selection, ReevaluationOfALongAppendMatchesTheReferenceAtEveryThreadCount) {
  std::mt19937_64 rng(8);
  const int32_t hkv = 2, hq = 6, rows = 300;
  kvmgr::SequenceKv kv(32, 8, hkv, kD, sizeof(float), test::store_memory(), 0);
  std::vector<double> k_all;
  commit_random(kv, rng, 20, 8, 1.0, {1.0f, 0, 1}, k_all);
  const int64_t n = kv.store_size();
  ASSERT_EQ(n, 128);
  const auto q = ref::round_to(ref::normal(rng, rows * hq * kD), DType::kFloat32);
  const std::vector<float> qf(q.begin(), q.end());
  std::vector<std::vector<std::vector<float>>> by_threads;
  for (const int threads : {1, 2}) {
    auto job = kvmgr::snapshot_for_reevaluation(kv.dram(), reinterpret_cast<const std::byte*>(qf.data()), rows, hq,
                                                kD, 0.35f, DType::kFloat32);
    tbb::task_arena(threads).execute([&] { kvmgr::run_reevaluation(*job); });
    ASSERT_TRUE(job->done);
    by_threads.push_back(job->weights);
  }
  EXPECT_EQ(by_threads[0], by_threads[1]);
  const int32_t group = hq / hkv;
  for (int32_t h = 0; h < hkv; ++h) {
    std::vector<double> kh, qh;
    for (int64_t t = 0; t < n; ++t) kh.insert(kh.end(), k_all.begin() + (t * hkv + h) * kD, k_all.begin() + (t * hkv + h + 1) * kD);
    for (int64_t r = 0; r < rows; ++r) {
      qh.insert(qh.end(), q.begin() + (r * hq + h * group) * kD, q.begin() + (r * hq + (h + 1) * group) * kD);
    }
    const auto a = ref::maw_observation(qh, rows, group, kh, n, kD, 0.35, -1);
    for (int64_t t = 0; t < n; ++t) EXPECT_NEAR(by_threads[0][h][t], a[t], 1e-5 * a[t]) << "head " << h << " key " << t;
  }
}

Options small_options(bool deterministic) {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = 4;
  o.n_kv_heads = 2;
  o.head_dim = 8;
  o.dtype = DType::kFloat32;
  o.window_blocks = 2;
  o.block_tokens = 4;
  o.reeval_min_tokens = 4;
  o.deterministic = deterministic;
  o.threads = 2;
  return o;
}

TEST(Reevaluation, RunsAfterAnAppendOfAtLeastReevalMinTokens) {
  test::Harness h(small_options(true));
  h.add(1);
  for (int i = 0; i < 12; ++i) h.step({1}, {1});  // the store fills as the window overflows
  LayerStats st;
  ASSERT_TRUE(h.runtime().layer_stats(0, &st).is_ok());
  EXPECT_GT(st.store_tokens, 0);
  EXPECT_EQ(st.reevaluations, 0);
  h.step({1}, {3});  // below reeval_min_tokens
  ASSERT_TRUE(h.runtime().layer_stats(0, &st).is_ok());
  EXPECT_EQ(st.reevaluations, 0);
  h.step({1}, {4});
  for (int32_t l = 0; l < 2; ++l) {
    ASSERT_TRUE(h.runtime().layer_stats(l, &st).is_ok());
    EXPECT_EQ(st.reevaluations, 1) << "layer " << l;
  }
}

TEST(Reevaluation, AsynchronousModePublishesBySynchronize) {
  test::Harness h(small_options(false));
  h.add(1);
  for (int i = 0; i < 12; ++i) h.step({1}, {1});
  h.step({1}, {6});
  ASSERT_TRUE(h.runtime().synchronize().is_ok());
  LayerStats st;
  ASSERT_TRUE(h.runtime().layer_stats(1, &st).is_ok());
  EXPECT_EQ(st.reevaluations, 1);
}

}  // namespace
}  // namespace hgca
