// Nothing is lost: after any sequence of steps, window ∪ store holds each sequence's history, every
// K/V bit-identical to what was inserted, in token order, with sparse selection switched on.
#include <gtest/gtest.h>

#include <random>

#include "harness.hpp"

namespace hgca {
namespace {

struct HistoryCase {
  DType dtype;
  int32_t window_blocks, block_tokens, heads_per_task;
  bool deterministic;
  bool few_slots = false;  // 5 layers sharing the CUDA backend's 4 smallest staging slots
};

class NothingLost : public ::testing::TestWithParam<HistoryCase> {};

TEST_P(NothingLost, WindowAndStoreHoldTheWholeHistoryBitForBit) {
  const HistoryCase c = GetParam();
  Options o;
  o.n_layers = c.few_slots ? 5 : 3;
  if (c.few_slots) o.staging_limit_bytes = 1;
  o.n_q_heads = 8;
  o.n_kv_heads = 4;
  o.head_dim = 16;
  o.dtype = c.dtype;
  o.window_blocks = c.window_blocks;
  o.block_tokens = c.block_tokens;
  o.beta = 1.0f;  // real selection: most store entries are not in S, and must still be kept
  o.min_keep = 2;
  o.heads_per_task = c.heads_per_task;
  o.reeval_min_tokens = 6;
  o.deterministic = c.deterministic;
  o.threads = 2;
  test::Harness h(o, 17);
  std::mt19937_64 rng(17);
  std::vector<SeqId> live{1, 2};
  h.add(1);
  h.add(2);
  SeqId next = 3;
  const int64_t row = static_cast<int64_t>(o.n_kv_heads) * o.head_dim;
  for (int step = 0; step < 30; ++step) {
    if (step % 10 == 9) {
      h.release(live.front());
      live.erase(live.begin());
      h.add(next);
      live.push_back(next++);
    }
    std::vector<int32_t> n_new;
    for (std::size_t i = 0; i < live.size(); ++i) n_new.push_back(rng() % 4 == 0 ? 1 + static_cast<int32_t>(rng() % 40) : 1);
    h.step(live, n_new);
    for (SeqId id : live) {
      int64_t len = 0;
      ASSERT_TRUE(h.runtime().sequence_length(id, &len).is_ok());
      for (int32_t l = 0; l < o.n_layers; ++l) {
        const auto expect_k = ref::encode(h.k_history(id, l), o.dtype);
        const auto expect_v = ref::encode(h.v_history(id, l), o.dtype);
        ASSERT_EQ(static_cast<int64_t>(expect_k.size()), len * row * static_cast<int64_t>(dtype_size(o.dtype)));
        std::vector<std::byte> k(expect_k.size(), std::byte{0xA5}), v(expect_v.size(), std::byte{0xA5});
        ASSERT_TRUE(h.runtime().read_kv(l, id, k.data(), v.data()).is_ok());
        ASSERT_EQ(k, expect_k) << "seq " << id << " layer " << l << " step " << step;
        ASSERT_EQ(v, expect_v) << "seq " << id << " layer " << l << " step " << step;
      }
    }
    for (int32_t l = 0; l < o.n_layers; ++l) {
      LayerStats st;
      ASSERT_TRUE(h.runtime().layer_stats(l, &st).is_ok());
      int64_t total = 0;
      for (SeqId id : live) {
        int64_t len = 0;
        ASSERT_TRUE(h.runtime().sequence_length(id, &len).is_ok());
        total += len;
      }
      EXPECT_EQ(st.window_tokens + st.store_tokens, total);
      EXPECT_LE(st.window_tokens, st.window_capacity);
      for (int64_t ctx : st.context_tokens) EXPECT_LE(ctx, st.store_tokens);
    }
  }
  ASSERT_TRUE(h.runtime().synchronize().is_ok());
  LayerStats st;
  ASSERT_TRUE(h.runtime().layer_stats(0, &st).is_ok());
  EXPECT_GT(st.store_tokens, 0);
  EXPECT_LT(st.selected_fraction, 1.0) << "beta = 1 should leave some of the store out of S";
  EXPECT_GT(st.selected_fraction, 0.0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NothingLost,
    ::testing::Values(HistoryCase{DType::kFloat32, 2, 4, 1, true}, HistoryCase{DType::kBFloat16, 3, 5, 2, true},
                      HistoryCase{DType::kFloat16, 1, 8, 4, false}, HistoryCase{DType::kBFloat16, 4, 1, 1, false},
                      HistoryCase{DType::kBFloat16, 2, 4, 1, false, true}),
    [](const auto& p) { return std::string(to_string(p.param.dtype)) + "_" + std::to_string(p.index); });

}  // namespace
}  // namespace hgca
