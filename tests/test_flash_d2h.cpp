// FlashD2H's CPU side: the scatter of staged rows into a host window of store blocks and its store
// gives what the host backend's commit gives; the scatter lanes run a layer's scatters in order, one at a time,
// and hold back a producer that would refill a staging slot still being scattered.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "cpu/flash_d2h.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"
#include "store_memory_fixture.hpp"

namespace hgca {
namespace {

struct ScatterCase {
  int32_t window_blocks, block_tokens, hkv, head_dim;
  std::size_t elem_size;
  kvmgr::SelectionParams sel;
  StoreWrites writes = StoreWrites::kAuto;  // kAuto: cached, at the tests' sizes
};

std::string name(const ::testing::TestParamInfo<ScatterCase>& info) {
  const ScatterCase& c = info.param;
  std::string s = "window";
  for (const auto& [tag, x] : {std::pair<const char*, int64_t>{"_", c.window_blocks}, {"x", c.block_tokens},
                               {"_hkv", c.hkv}, {"_d", c.head_dim}, {"_bytes", static_cast<int64_t>(c.elem_size)}}) {
    s += tag;
    s += std::to_string(x);
  }
  if (c.writes != StoreWrites::kAuto) s += std::string("_") + to_string(c.writes);
  return s;
}

class ScatterMatchesCommit : public ::testing::TestWithParam<ScatterCase> {};

// The host backend tracks MAW itself (commit); the CUDA backend's scatter gets the evicted MAW from
// the GPU (MirroredKv::evict_and_insert). Fed the same rows, and the MAW that commit evicted, the
// two must hold the same window and store, entry for entry, through wraps, prompts longer than the
// window and windows whose tail is not block-aligned; with the new rows' blocks allocated ahead or not;
// with bulk rows of whole cache lines streamed into the blocks or written through the caches.
TEST_P(ScatterMatchesCommit, StoreAndWindowEqualTheHostPath) {
  const ScatterCase c = GetParam();
  const int64_t w = int64_t{c.window_blocks} * c.block_tokens;
  kvmgr::SequenceKv host(w, c.block_tokens, c.hkv, c.head_dim, c.elem_size, test::store_memory(), 0);
  kvmgr::StoreMemoryOptions mo = test::small_chunks();
  mo.writes = c.writes;
  kvmgr::MirroredKv scattered(w, c.block_tokens, c.hkv, c.head_dim, c.elem_size, test::store_memory(mo), 0);
  const std::size_t row = static_cast<std::size_t>(c.hkv) * c.head_dim * c.elem_size;
  std::mt19937_64 rng(w * 7 + c.hkv);
  std::uniform_real_distribution<float> weight(0.0f, 2.0f / static_cast<float>(w));
  int64_t evicted_total = 0;
  for (int call = 0; call < 60; ++call) {
    const int64_t n = call % 9 == 0 ? 1 + static_cast<int64_t>(rng() % (3 * w)) : 1 + static_cast<int64_t>(rng() % 3);
    std::vector<std::byte> k(n * row), v(n * row);
    for (auto& b : k) b = static_cast<std::byte>(rng());
    for (auto& b : v) b = static_cast<std::byte>(rng());
    const int64_t dense = host.window().size() + n;
    std::vector<std::vector<float>> a(static_cast<std::size_t>(c.hkv), std::vector<float>(dense));
    for (auto& head : a) {
      for (float& x : head) x = weight(rng);
    }
    std::vector<const float*> a_ptrs;
    for (const auto& head : a) a_ptrs.push_back(head.data());

    const int64_t evict = host.evict_count(n);
    const int64_t from = host.store_size();
    host.commit(k.data(), v.data(), n, a_ptrs, 0.25f, c.sel);
    std::vector<float> evicted_maw;  // [Hkv, evict], as the GPU stages it
    for (int32_t h = 0; h < c.hkv; ++h) {
      const auto& maw = host.store(h).maw;
      evicted_maw.insert(evicted_maw.end(), maw.begin() + from, maw.end());
    }
    // Blocks allocated ahead, as the CUDA backend does when it enqueues (call % 3 == 0); none
    // (call % 3 == 1); made for a window 7 entries longer, as a graph launched again may bring them
    // (call % 3 == 2: replaced where their count differs).
    kvmgr::DramStore::PreparedAppend ahead;
    if (call % 3 != 1) ahead = scattered.allocate_blocks(scattered.window_size() + (call % 3 == 2 ? 7 : 0), n);
    scattered.evict_and_insert(k.data(), v.data(), n, evicted_maw.data(), c.sel, std::move(ahead));
    evicted_total += evict;

    const std::size_t head_row = static_cast<std::size_t>(c.head_dim) * c.elem_size;
    ASSERT_EQ(scattered.window_size(), host.window().size()) << "call " << call;
    for (int64_t i = 0; i < host.window().size(); ++i) {
      for (int32_t h = 0; h < c.hkv; ++h) {
        ASSERT_EQ(std::memcmp(scattered.window_k(h, i), host.window().k(host.window().slot(i)) + h * head_row, head_row), 0);
        ASSERT_EQ(std::memcmp(scattered.window_v(h, i), host.window().v(host.window().slot(i)) + h * head_row, head_row), 0);
      }
    }
    ASSERT_EQ(scattered.dram().size(), host.store_size()) << "call " << call;
    for (int32_t h = 0; h < c.hkv; ++h) {
      const kvmgr::HeadStore& got = scattered.dram().store(h);
      const kvmgr::HeadStore& want = host.store(h);
      ASSERT_EQ(got.maw, want.maw) << "call " << call << " head " << h;
      ASSERT_EQ(got.n_ref, want.n_ref);
      ASSERT_EQ(got.context.indices, want.context.indices);
      ASSERT_EQ(got.context_cache.rows(), want.context_cache.rows()) << "call " << call;
      ASSERT_EQ(test::cache_rows(got.context_cache, false, head_row), test::cache_rows(want.context_cache, false, head_row)) << "call " << call;
      ASSERT_EQ(test::cache_rows(got.context_cache, true, head_row), test::cache_rows(want.context_cache, true, head_row)) << "call " << call;
      for (int64_t j = 0; j < host.store_size(); ++j) {
        ASSERT_EQ(std::memcmp(scattered.dram().k(h, j), host.store_k(h, j), head_row), 0) << "entry " << j;
        ASSERT_EQ(std::memcmp(scattered.dram().v(h, j), host.store_v(h, j), head_row), 0) << "entry " << j;
      }
    }
  }
  EXPECT_GT(evicted_total, 4 * w) << "the case should evict through many wraps";
}

INSTANTIATE_TEST_SUITE_P(Cases, ScatterMatchesCommit,
                         ::testing::Values(ScatterCase{2, 4, 2, 8, 4, {1.0f, 2, 1}},
                                           ScatterCase{3, 5, 3, 40, 2, {1.0f, 0, 3}},
                                           ScatterCase{1, 8, 1, 16, 2, {0.0f, 0, 1}},
                                           ScatterCase{4, 1, 4, 8, 2, {2.0f, 3, 2}},
                                           ScatterCase{3, 4, 2, 32, 2, {1.0f, 2, 1}, StoreWrites::kStreamed},
                                           ScatterCase{2, 8, 2, 64, 2, {0.5f, 1, 2}, StoreWrites::kStreamed},
                                           ScatterCase{2, 8, 2, 64, 2, {0.5f, 1, 2}, StoreWrites::kCached}),
                         name);

// Two lanes of scatters that sleep for random times: each lane's run in the order they were
// started and never overlap; the lanes do run at the same time as each other.
// Store memory runs out where only the context cache needs more (the blocks were allocated when
// the call was enqueued): the GPU's window has moved on, so the evicted entries must still join the
// store, in order with their MAW, unselected; the window takes the new rows; then the exhaustion is
// reported. Store memory: one 64 KiB chunk, holding 2 KiB blocks; a 16-row cache is 4 KiB, another
// slot size, which would need a second chunk. Then a call whose rows need a block more, with the
// chunk's 32 blocks taken: allocating them ahead fails, with nothing changed.
TEST(ScatterExhaustion, EvictedEntriesAreKeptWhenTheContextCacheCannotGrow) {
  kvmgr::StoreMemoryOptions o = test::small_chunks();
  o.low_water_chunks = 0;
  o.high_water_chunks = 1;
  o.limit_bytes = o.chunk_bytes;
  const int32_t block_tokens = 8, head_dim = 64;
  const std::size_t elem = 2, row = head_dim * elem;  // one KV head
  kvmgr::MirroredKv kv(2 * block_tokens, block_tokens, 1, head_dim, elem, test::store_memory(o), 0);
  const int64_t n = 32;  // into an empty window of 16: the oldest 16 leave at once
  std::vector<std::byte> k(n * row), v(n * row);
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<std::byte>(i * 7 + 1);
    v[i] = static_cast<std::byte>(i * 13 + 5);
  }
  std::vector<float> evicted_maw(16);
  for (int i = 0; i < 16; ++i) evicted_maw[i] = 0.01f * static_cast<float>(i + 1);
  const kvmgr::SelectionParams sel{0.0f, 0, 1};
  kvmgr::DramStore::PreparedAppend ahead = kv.allocate_blocks(0, n);
  ASSERT_EQ(ahead.count, n);
  EXPECT_THROW(kv.evict_and_insert(k.data(), v.data(), n, evicted_maw.data(), sel, std::move(ahead)),
               kvmgr::EvictedUnselected);
  ASSERT_EQ(kv.dram().size(), 16);
  const kvmgr::HeadStore& store = kv.dram().store(0);
  EXPECT_THAT(store.maw, ::testing::ElementsAreArray(evicted_maw));
  EXPECT_EQ(store.context.size(), 0) << "no room for S's cache: nothing selected";
  for (int64_t j = 0; j < 16; ++j) {
    EXPECT_EQ(std::memcmp(kv.dram().k(0, j), k.data() + j * row, row), 0) << "entry " << j;
    EXPECT_EQ(std::memcmp(kv.dram().v(0, j), v.data() + j * row, row), 0) << "entry " << j;
  }
  auto window_holds_the_last_16 = [&] {
    ASSERT_EQ(kv.window_size(), 16);
    for (int64_t i = 0; i < 16; ++i) {
      EXPECT_EQ(std::memcmp(kv.window_k(0, i), k.data() + (16 + i) * row, row), 0) << "row " << i;
      EXPECT_EQ(std::memcmp(kv.window_v(0, i), v.data() + (16 + i) * row, row), 0) << "row " << i;
    }
  };
  window_holds_the_last_16();

  std::vector<kvmgr::DramStore::PreparedAppend> taken;  // the chunk's other 28 blocks
  while (true) {
    try {
      taken.push_back(kv.dram().allocate_append(block_tokens));
    } catch (const kvmgr::StoreMemoryExhausted&) {
      break;
    }
  }
  EXPECT_EQ(taken.size(), 28u);
  EXPECT_THROW(kv.allocate_blocks(kv.window_size(), 1), kvmgr::StoreMemoryExhausted);
  try {  // no blocks for the new row: nothing changes (and it is not the report above)
    kv.evict_and_insert(k.data(), v.data(), 1, evicted_maw.data(), sel);
    ADD_FAILURE() << "no exception";
  } catch (const kvmgr::EvictedUnselected&) {
    ADD_FAILURE() << "reported as kept unselected";
  } catch (const kvmgr::StoreMemoryExhausted&) {
  }
  EXPECT_EQ(kv.dram().size(), 16);
  window_holds_the_last_16();
}

// fill_append copies runs of rows in parallel, across the boundaries of the pieces (window runs,
// new rows) and of the blocks: every entry of every head must land in order, at any number of
// threads, for any row size, streamed (rows of whole cache lines: D 32) or not.
TEST(ScatterFill, PiecesOfAwkwardSizesLandInOrderAtAnyThreadCount) {
  const int32_t block_tokens = 16, hkv = 3;
  for (const auto& [head_dim, writes] : {std::pair{24, StoreWrites::kCached}, std::pair{20, StoreWrites::kStreamed},
                                         std::pair{32, StoreWrites::kCached}, std::pair{32, StoreWrites::kStreamed}}) {
    for (const std::size_t threads : {1, 4}) {
      tbb::global_control workers(tbb::global_control::max_allowed_parallelism, threads);
      const std::size_t head_row = head_dim * 2, row = hkv * head_row;
      kvmgr::StoreMemoryOptions mo = test::small_chunks();
      mo.writes = writes;
      kvmgr::DramStore store(block_tokens, hkv, head_dim, 2, test::store_memory(mo), 0);
      const int64_t sizes[] = {5, 37, 22, 32};  // 96 entries, 6 blocks
      std::mt19937_64 rng(head_dim * 10 + threads);
      std::vector<std::vector<std::byte>> ks, vs;
      std::vector<kvmgr::DramStore::Rows> pieces;
      for (const int64_t n : sizes) {
        ks.emplace_back(n * row);
        vs.emplace_back(n * row);
        for (auto& b : ks.back()) b = static_cast<std::byte>(rng());
        for (auto& b : vs.back()) b = static_cast<std::byte>(rng());
        pieces.push_back({ks.back().data(), vs.back().data(), n});
      }
      const kvmgr::SelectionParams sel{0.0f, 0, 1};
      kvmgr::DramStore::PreparedAppend p = store.prepare_append(96, sel);
      store.fill_append(p, pieces);
      const std::vector<float> maw(hkv * 96, 0.5f);
      store.commit_append(std::move(p), maw.data(), 96, sel);
      ASSERT_EQ(store.size(), 96);
      int64_t j = 0;
      for (std::size_t piece = 0; piece < pieces.size(); ++piece) {
        for (int64_t r = 0; r < sizes[piece]; ++r, ++j) {
          for (int32_t h = 0; h < hkv; ++h) {
            ASSERT_EQ(std::memcmp(store.k(h, j), ks[piece].data() + r * row + h * head_row, head_row), 0)
                << "D " << head_dim << ", " << to_string(writes) << ", threads " << threads << ", entry " << j << ", head " << h;
            ASSERT_EQ(std::memcmp(store.v(h, j), vs[piece].data() + r * row + h * head_row, head_row), 0)
                << "D " << head_dim << ", " << to_string(writes) << ", threads " << threads << ", entry " << j << ", head " << h;
          }
        }
      }
    }
  }
}

// The staging rule at 8 MiB calls (8 slots in the default 64 MiB), at decode-sized ones, and at
// calls larger than the limit.
TEST(StagingSlots, AsManyAsTheLimitHoldsFromFourToTwoPerLayerNeverOnePerLayer) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr std::size_t kCall = 8 << 20;
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, kCall, 32), 8u);
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, kCall, 16), 8u);
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, kCall, 8), 9u) << "8 would be one per layer";
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, kCall, 4), 8u) << "2 per layer at most";
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, kCall, 1), 2u);
  EXPECT_EQ(cpu::staging_slots(128 * kMiB, kCall, 16), 17u) << "16 would be one per layer";
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, 64 << 10, 32), 64u) << "decode: 2 per layer";
  EXPECT_EQ(cpu::staging_slots(1, kCall, 5), 4u) << "at least 4, however small the limit";
  EXPECT_EQ(cpu::staging_slots(1, kCall, 4), 5u) << "4 would be one per layer";
  EXPECT_EQ(cpu::staging_slots(64 * kMiB, 0, 3), 6u) << "an empty call: as many as allowed";
}

TEST(ScatterLanes, ALanesScattersRunInOrderOneAtATime) {
  // Workers for both lanes even on a machine of two cores (the waiting thread does not help).
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  cpu::ScatterLanes lanes(2, arena);
  std::vector<int> order[2];
  std::atomic<int> running[2] = {0, 0};
  std::atomic<int> lanes_busy{0}, most_lanes_busy{0};
  std::atomic<bool> overlapped{false};
  std::mt19937 rng(5);
  for (int i = 0; i < 40; ++i) {
    // The first scatter of each lane sleeps long enough for a second worker to come even on a loaded
    // host (with sleeps under 0.4 ms only, the lanes once never met while a build ran beside).
    const int lane = i < 2 ? i : static_cast<int>(rng() % 2);
    const auto sleep = std::chrono::microseconds(i < 2 ? 50000 : rng() % 400);
    lanes.start(lane, [&, lane, i, sleep] {
      if (running[lane].fetch_add(1) != 0) overlapped = true;
      const int busy = lanes_busy.fetch_add(1) + 1;
      int most = most_lanes_busy.load();
      while (busy > most && !most_lanes_busy.compare_exchange_weak(most, busy)) {
      }
      std::this_thread::sleep_for(sleep);
      order[lane].push_back(i);
      lanes_busy.fetch_sub(1);
      running[lane].fetch_sub(1);
    });
  }
  lanes.wait_all();
  EXPECT_FALSE(overlapped) << "two scatters of one lane ran at once";
  EXPECT_EQ(order[0].size() + order[1].size(), 40u);
  for (const auto& o : order) EXPECT_TRUE(std::is_sorted(o.begin(), o.end()));
  EXPECT_EQ(most_lanes_busy.load(), 2) << "the lanes never ran side by side";
}

// start() returns once the lane's previous scatter has finished (the next one then runs on the
// thread that finished it); callers on two threads starting into one lane never overlap, and every
// scatter runs.
TEST(ScatterLanes, StartReturnsOnceThePreviousFinishedAndCallersNeverOverlap) {
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  cpu::ScatterLanes lanes(1, arena);
  constexpr int kScatters = 30;
  std::atomic<bool> done[kScatters] = {};
  std::mt19937 rng(3);
  for (int i = 0; i < kScatters; ++i) {
    const auto sleep = std::chrono::microseconds(rng() % 300);
    lanes.start(0, [&done, i, sleep] {
      std::this_thread::sleep_for(sleep);
      done[i] = true;
    });
    if (i > 0) {
      EXPECT_TRUE(done[i - 1].load()) << "start of scatter " << i << " returned before its predecessor ended";
    }
  }
  lanes.wait_all();
  for (int i = 0; i < kScatters; ++i) EXPECT_TRUE(done[i].load()) << i;

  std::atomic<int> running{0}, ran{0};
  std::atomic<bool> overlapped{false};
  auto caller = [&](int seed) {
    std::mt19937 r(seed);
    for (int i = 0; i < kScatters; ++i) {
      const auto sleep = std::chrono::microseconds(r() % 300);
      lanes.start(0, [&, sleep] {
        if (running.fetch_add(1) != 0) overlapped = true;
        std::this_thread::sleep_for(sleep);
        running.fetch_sub(1);
        ran.fetch_add(1);
      });
    }
  };
  std::thread a(caller, 1), b(caller, 2);
  a.join();
  b.join();
  lanes.wait_all();
  EXPECT_FALSE(overlapped) << "two scatters of one lane ran at once";
  EXPECT_EQ(ran.load(), 2 * kScatters);
}

// The runtime's protocol for one layer (its 2 staging slots): call c's rows land in slot c % 2, then
// the call's CPU part waits for the lane (call c - 1's scatter), then call c's scatter starts. A
// scatter slower than the producer must find its slot unchanged until it is done, and the producer
// must be the one that waits (backpressure), not overwrite.
TEST(ScatterLanes, AProducerNeverRefillsASlotBeingScattered) {
  tbb::task_arena arena(2);
  cpu::ScatterLanes lanes(1, arena);
  std::vector<uint8_t> slots[2] = {std::vector<uint8_t>(4096), std::vector<uint8_t>(4096)};
  std::atomic<int> corrupted{0};
  double waited = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kCalls = 30;
  for (int c = 0; c < kCalls; ++c) {
    std::fill(slots[c % 2].begin(), slots[c % 2].end(), static_cast<uint8_t>(c));  // the copy
    waited += lanes.wait(0);                                                         // the CPU part
    lanes.start(0, [&, c] {                                                          // the scatter
      const auto& slot = slots[c % 2];
      for (int pass = 0; pass < 4; ++pass) {
        for (uint8_t b : slot) corrupted += b != static_cast<uint8_t>(c);
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    });
  }
  lanes.wait_all();
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_GE(total, kCalls * 2e-3) << "the scatters should have run one after the other";
  EXPECT_GT(waited, 0.5 * total) << "the producer should have been held back by the slow scatters";
}

}  // namespace
}  // namespace hgca
