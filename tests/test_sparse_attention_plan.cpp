// The GPU sparse attention's host side, on the CPU: the key chunks its blocks take, the workspace
// slots of their partial states, the launch plan and the argument check. The kernels use the same
// chunk and slot functions, so their index arithmetic is checked here without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "gpu/sparse_attention.hpp"

namespace hgca::gpu {
namespace {

constexpr int32_t kSms = 132;  // the H200

// Every key of every item belongs to exactly one chunk; chunks are non-empty, at most kv_splits,
// whole granules when split; items past split_pairs, and plans of one split, are not split.
TEST(SparseAttentionPlan, KeyChunksCoverEveryKeyOnce) {
  for (int32_t splits : {1, 2, 3, 7, 16, 64}) {
    for (int64_t n = 0; n <= 3000; n += n < 200 ? 1 : 37) {
      for (int64_t pairs : {1, 8, 9}) {
        const SparseAttentionPlan plan{1, 1, splits, 8};
        const SparseKeyChunks ch = sparse_key_chunks(n, pairs, plan);
        const std::string at = "n " + std::to_string(n) + " splits " + std::to_string(splits) + " pairs " +
                               std::to_string(pairs);
        ASSERT_GE(ch.count, 1) << at;
        ASSERT_LE(ch.count, splits) << at;
        if (n == 0) {
          EXPECT_EQ(ch.count, 1) << at;
          EXPECT_EQ(ch.size, 0) << at;
          continue;
        }
        if (splits == 1 || pairs > 8) {
          EXPECT_EQ(ch.count, 1) << at;
          EXPECT_EQ(ch.size, n) << at;
          continue;
        }
        EXPECT_EQ(ch.size % kSparseChunkGranule, 0) << at;
        // Chunk c covers [c·size, min(n, (c + 1)·size)): the last one non-empty, ending at n.
        EXPECT_LT((ch.count - 1) * ch.size, n) << at;
        EXPECT_GE(ch.count * ch.size, n) << at;
      }
    }
  }
}

// Slots of (item, pair, chunk) are distinct and lie inside the workspace's two regions.
TEST(SparseAttentionPlan, PartialSlotsAreDistinctAndInsideTheWorkspace) {
  for (const SparseAttentionPlan plan : {SparseAttentionPlan{4, 1, 5, 4}, SparseAttentionPlan{8, 3, 64, 24},
                                         SparseAttentionPlan{1, 1, 2, 1}}) {
    for (int32_t n_items : {1, 3, 17}) {
      for (int32_t d : {8, 136, 256}) {
        const std::size_t offset = sparse_partials_offset(plan, n_items);
        const std::size_t bytes = sparse_attention_workspace_bytes(plan, n_items, d);
        EXPECT_EQ(offset % 256, 0u);
        std::set<int64_t> seen;
        for (int64_t z = 0; z < n_items; ++z) {
          for (int64_t p = 0; p < plan.split_pairs; ++p) {
            for (int64_t c = 0; c < plan.kv_splits; ++c) {
              const int64_t slot = sparse_partial_slot(z, p, c, plan);
              ASSERT_TRUE(seen.insert(slot).second) << "slot " << slot << " taken twice";
              ASSERT_GE(slot, 0);
              ASSERT_LE(static_cast<std::size_t>(slot + 1) * 2 * sizeof(float), offset);  // (max, sum)
              ASSERT_LE(offset + static_cast<std::size_t>(slot + 1) * d * sizeof(float), bytes);  // output
            }
            // The combine reads an item's chunks as consecutive slots.
            EXPECT_EQ(sparse_partial_slot(z, p, plan.kv_splits - 1, plan), sparse_partial_slot(z, p, 0, plan) + plan.kv_splits - 1);
          }
        }
      }
    }
  }
  EXPECT_EQ(sparse_attention_workspace_bytes(SparseAttentionPlan{4, 1, 1, 0}, 10, 128), 0u);
}

SparseAttentionShape shape(int32_t items, int64_t n, int32_t rows) {
  return {items, n, n * items, rows};
}

TEST(SparseAttentionPlan, TilesFollowTheGroupAndRows) {
  const int32_t expect[] = {1, 2, 4, 4, 8, 8, 8, 8};
  for (int32_t g = 1; g <= 8; ++g) {
    const SparseAttentionPlan p = plan_sparse_attention(shape(8, 3277, 1), g, kSms);
    EXPECT_EQ(p.tile_pairs, expect[g - 1]) << "G " << g;
    EXPECT_EQ(p.tiles, 1) << "G " << g;
  }
  const SparseAttentionPlan append = plan_sparse_attention(shape(8, 3277, 7), 4, kSms);
  EXPECT_EQ(append.tile_pairs, 8);
  EXPECT_EQ(append.tiles, 4);  // 28 pairs
  EXPECT_EQ(plan_sparse_attention(shape(1, 100, 1 << 20), 8, kSms).tiles, 65535);  // then blocks loop
}

TEST(SparseAttentionPlan, SplitsWhereBlocksWouldBeTooFew) {
  // Decode, batch 1, Hkv 8, 10 % of 32K: 8 items cannot fill 132 SMs unsplit.
  const SparseAttentionPlan one = plan_sparse_attention(shape(8, 3277, 1), 4, kSms);
  EXPECT_GT(one.kv_splits, 8);
  EXPECT_EQ(one.split_pairs, 4);
  // Batch 16: still splits, fewer ways.
  const SparseAttentionPlan sixteen = plan_sparse_attention(shape(128, 3277, 1), 4, kSms);
  EXPECT_GT(sixteen.kv_splits, 1);
  EXPECT_LT(sixteen.kv_splits, one.kv_splits);
  // Thousands of items fill the GPU unsplit.
  EXPECT_EQ(plan_sparse_attention(shape(4096, 3277, 1), 4, kSms).kv_splits, 1);
  // Sets of one granule, and appends past kMaxSparseSplitPairs pairs, are never split.
  EXPECT_EQ(plan_sparse_attention(shape(1, kSparseChunkGranule, 1), 1, kSms).kv_splits, 1);
  const SparseAttentionPlan wide = plan_sparse_attention(shape(1, 1 << 20, 300), 4, kSms);
  EXPECT_EQ(wide.kv_splits, 1);
  EXPECT_EQ(wide.split_pairs, 0);
  // One long set among short ones: split, so that it does not hold the step alone.
  SparseAttentionShape skewed{257, 100000, 100000 + 256 * 100, 1};
  EXPECT_GT(plan_sparse_attention(skewed, 4, kSms).kv_splits, 8);
  for (int32_t items : {1, 2, 5, 40, 300}) {
    for (int64_t n : {65, 1000, 13107, 1 << 22}) {
      const SparseAttentionPlan p = plan_sparse_attention(shape(items, n, 1), 2, kSms);
      EXPECT_GE(p.kv_splits, 1);
      EXPECT_LE(p.kv_splits, kMaxSparseSplits);
      EXPECT_TRUE(check_sparse_attention({DType::kBFloat16, 2, 64, 1.0f, nullptr, 0, p, nullptr, 0}).is_ok());
    }
  }
}

/// Expects `s` to be an error of `code` whose message contains `needle`.
void expect_error(const Status& s, StatusCode code, const std::string& needle) {
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

TEST(SparseAttentionPlan, CheckNamesTheBadArgument) {
  alignas(16) static std::byte workspace[1 << 16];
  SparseAttentionItem item;
  SparseAttentionParams ok{DType::kFloat16, 4, 64, 0.125f, &item, 1, SparseAttentionPlan{4, 1, 3, 4}, workspace,
                           sizeof(workspace)};
  ASSERT_TRUE(check_sparse_attention(ok).is_ok());
  auto with = [&](auto change) {
    SparseAttentionParams p = ok;
    change(p);
    return check_sparse_attention(p);
  };
  expect_error(with([](auto& p) { p.dtype = static_cast<DType>(9); }), StatusCode::kInvalidArgument, "dtype = 9");
  expect_error(with([](auto& p) { p.group = 9; }), StatusCode::kUnsupported, "group = 9");
  expect_error(with([](auto& p) { p.head_dim = 12; }), StatusCode::kUnsupported, "head_dim = 12");
  expect_error(with([](auto& p) { p.head_dim = 264; }), StatusCode::kUnsupported, "head_dim = 264");
  expect_error(with([](auto& p) { p.sm_scale = NAN; }), StatusCode::kInvalidArgument, "sm_scale = nan");
  expect_error(with([](auto& p) { p.n_items = -1; }), StatusCode::kInvalidArgument, "n_items = -1");
  expect_error(with([](auto& p) { p.items = nullptr; }), StatusCode::kInvalidArgument, "items is null");
  expect_error(with([](auto& p) { p.plan.tile_pairs = 3; }), StatusCode::kInvalidArgument, "plan.tile_pairs = 3");
  expect_error(with([](auto& p) { p.plan.tiles = 0; }), StatusCode::kInvalidArgument, "plan.tiles = 0");
  expect_error(with([](auto& p) { p.plan.kv_splits = 65; }), StatusCode::kInvalidArgument, "plan.kv_splits = 65");
  expect_error(with([](auto& p) { p.plan.split_pairs = 1025; }), StatusCode::kInvalidArgument, "plan.split_pairs = 1025");
  expect_error(with([](auto& p) { p.workspace_bytes = 100; }), StatusCode::kInvalidArgument, "workspace_bytes = 100");
  expect_error(with([](auto& p) { p.workspace = nullptr; }), StatusCode::kInvalidArgument, "workspace_bytes");
  expect_error(with([&](auto& p) { p.workspace = workspace + 4; }), StatusCode::kInvalidArgument, "16-byte");

  // With a host copy of the items, those are checked too.
  float o[2 * 4 * 64], lse[8];
  const uint16_t q[2 * 4 * 64] = {};
  const uint16_t kv[64] = {};
  const SparseAttentionItem good{kv, kv, 1, q, 256, 2, o, 256, lse, 4};
  EXPECT_TRUE(check_sparse_attention(ok, {&good, 1}).is_ok());
  auto item_with = [&](auto change) {
    SparseAttentionItem it = good;
    change(it);
    return check_sparse_attention(ok, {&it, 1});
  };
  expect_error(item_with([](auto& it) { it.n = -2; }), StatusCode::kInvalidArgument, "items[0]: n = -2");
  expect_error(item_with([](auto& it) { it.n_rows = 0; }), StatusCode::kInvalidArgument, "n_rows = 0");
  expect_error(item_with([](auto& it) { it.k = nullptr; }), StatusCode::kInvalidArgument, "items[0].k is null");
  expect_error(item_with([](auto& it) { it.lse = nullptr; }), StatusCode::kInvalidArgument, "items[0].lse is null");
  expect_error(item_with([](auto& it) { it.o_row_stride = 64; }), StatusCode::kInvalidArgument, "o_row_stride = 64");
  const kvmgr::KvSegment table[1] = {{kv, kv}};
  expect_error(item_with([&](auto& it) { it.segments = table; }), StatusCode::kInvalidArgument, "segment_rows = 0");
  EXPECT_TRUE(item_with([&](auto& it) {
                it.segments = table;
                it.segment_rows = 64;
              }).is_ok());
  EXPECT_TRUE(item_with([](auto& it) {
                it.k = it.v = nullptr;
                it.n = 0;
              }).is_ok());
  SparseAttentionItem two[2] = {good, good};
  expect_error(check_sparse_attention(ok, two), StatusCode::kInvalidArgument, "host_items has 2 items");
}

}  // namespace
}  // namespace hgca::gpu
