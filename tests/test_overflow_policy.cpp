// The overflow policy's cost model on synthetic rates: nothing moves when the CPU is not the
// bottleneck or moving does not pay, appends move while the GPU reads them once (not when their
// tiles read them again and again), skewed decode batches are
// balanced (within one item of the fractional optimum, and of the best subset where that can be
// enumerated), the predicted critical path is never worse than moving nothing, and bad input is
// refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "overflow_policy.hpp"

namespace hgca {
namespace {

constexpr int64_t kMB = 1000 * 1000;

OverflowPlan plan(const std::vector<OverflowItem>& items, double window_s, const OverflowRates& rates,
                  double margin = 0.1) {
  OverflowPlan p;
  const Status s = plan_overflow(items, window_s, rates, margin, &p);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return p;
}

/// The predicted critical path of moving exactly `moved` (a mask), by the model's own item costs.
double critical_of(const std::vector<OverflowItem>& items, const std::vector<char>& moved, double window_s,
                   const OverflowRates& rates) {
  double cpu = 0.0, gpu = window_s;
  bool any = false, cpu_any = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (moved[i]) {
      gpu += overflow_gpu_seconds(items[i], rates);
      any = true;
    } else {
      cpu += overflow_cpu_seconds(items[i], rates);
      cpu_any = cpu_any || items[i].kv_bytes > 0;
    }
  }
  return std::max(cpu + (cpu_any ? rates.cpu_fixed_s : 0.0), gpu + (any ? rates.gpu_fixed_s : 0.0));
}

/// The plan's own account must match its item list.
void expect_consistent(const std::vector<OverflowItem>& items, const OverflowPlan& p, double window_s,
                       const OverflowRates& rates) {
  std::vector<char> moved(items.size(), 0);
  int64_t bytes = 0, rows = 0;
  for (std::size_t x = 0; x < p.gpu_items.size(); ++x) {
    const int32_t i = p.gpu_items[x];
    ASSERT_TRUE(i >= 0 && static_cast<std::size_t>(i) < items.size());
    if (x > 0) {
      ASSERT_LT(p.gpu_items[x - 1], i) << "indices ascending and distinct";
    }
    moved[i] = 1;
    bytes += items[i].kv_bytes;
    rows += items[i].rows;
  }
  EXPECT_EQ(p.bytes_moved, bytes);
  EXPECT_EQ(p.rows_moved, rows);
  EXPECT_DOUBLE_EQ(p.window_s, window_s);
  EXPECT_NEAR(p.critical_s(), critical_of(items, moved, window_s, rates), 1e-12);
  EXPECT_NEAR(p.critical_alone_s(), critical_of(items, std::vector<char>(items.size(), 0), window_s, rates), 1e-12);
}

std::vector<OverflowItem> decode_items(int32_t n, int64_t bytes) {
  return std::vector<OverflowItem>(static_cast<std::size_t>(n), OverflowItem{bytes, 1});
}

TEST(OverflowPolicy, NothingMovesWhileTheWindowIsTheLongerPart) {
  const OverflowRates rates;
  const auto items = decode_items(64, 1 * kMB);  // 64 MB: 0.65 ms on the CPU
  const OverflowPlan p = plan(items, 1e-3, rates);
  EXPECT_TRUE(p.gpu_items.empty());
  EXPECT_EQ(p.bytes_moved, 0);
  EXPECT_DOUBLE_EQ(p.critical_s(), 1e-3);
  expect_consistent(items, p, 1e-3, rates);
}

TEST(OverflowPolicy, NothingMovesWhenTheGatherCostsMoreThanItSaves) {
  OverflowRates slow_link;
  slow_link.h2d_gbps = 5.0;  // a 10 MB set: 0.1 ms on the CPU, 2 ms to gather
  const auto items = decode_items(8, 10 * kMB);
  const OverflowPlan p = plan(items, 0.7e-3, slow_link);
  EXPECT_TRUE(p.gpu_items.empty());
  EXPECT_GT(p.cpu_alone_s, p.window_s);  // the CPU is the longer part, and still nothing pays
  expect_consistent(items, p, 0.7e-3, slow_link);
}

TEST(OverflowPolicy, MovesOnlyWhenItWinsByTheMargin) {
  OverflowRates rates;
  rates.gpu_fixed_s = 0.0;
  rates.cpu_fixed_s = 0.0;
  // CPU 10 % longer than the window: balancing gains about 3 % (the GPU side costs ~2× per byte).
  const auto items = decode_items(110, 1 * kMB);
  const double cpu = overflow_cpu_seconds(items[0], rates) * 110;
  const double window = cpu / 1.1;
  const OverflowPlan strict = plan(items, window, rates, 0.1);
  EXPECT_TRUE(strict.gpu_items.empty());
  const OverflowPlan loose = plan(items, window, rates, 0.01);
  EXPECT_FALSE(loose.gpu_items.empty());
  EXPECT_LE(loose.critical_s(), 0.99 * loose.critical_alone_s());
  expect_consistent(items, loose, window, rates);
}

TEST(OverflowPolicy, SmallStepsMoveWholeWhenTheCpuFixedCostDominates) {
  // Eight 50 KB sets and a short window: the CPU's part is mostly its fixed cost, which only moving
  // every item saves.
  OverflowRates rates;
  rates.cpu_fixed_s = 40e-6;
  rates.gpu_fixed_s = 20e-6;
  const auto items = decode_items(8, 50 * 1000);
  const OverflowPlan p = plan(items, 5e-6, rates);
  EXPECT_EQ(p.gpu_items.size(), items.size());
  EXPECT_DOUBLE_EQ(p.cpu_s, 0.0);
  EXPECT_LT(p.critical_s(), 0.9 * p.critical_alone_s());
  expect_consistent(items, p, 5e-6, rates);

  // Without the fixed cost the CPU's 4 µs beat any move (20 µs of launches alone).
  rates.cpu_fixed_s = 0.0;
  const OverflowPlan q = plan(items, 5e-6, rates);
  EXPECT_TRUE(q.gpu_items.empty());
  expect_consistent(items, q, 5e-6, rates);
}

TEST(OverflowPolicy, AppendsMoveWhileTheirTileIsReadOnce) {
  // Rates where the GPU computes rows far faster (tensor cores). Appends of 4 rows at G = 2 (8
  // pairs: one tile, one read of the set over the link) are rows-bound on the CPU: they move.
  OverflowRates rates;
  rates.gpu_row_gbps = 100 * rates.cpu_row_gbps;
  rates.group = 2;
  std::vector<OverflowItem> items(8, OverflowItem{6700 * 1000, 4});  // 8 heads, 13K keys, 4 rows
  const OverflowPlan p = plan(items, 20e-6, rates);
  EXPECT_FALSE(p.gpu_items.empty());
  EXPECT_LT(p.critical_s(), 0.9 * p.critical_alone_s());
  expect_consistent(items, p, 20e-6, rates);

  // 512 rows: 128 tiles, each reading the set over the link again (the kernel reads it in place):
  // however fast the GPU computes, an item costs it 1.5× the CPU's time, so the GPU only takes a
  // balancing share, 3 of 8 (the old model, one read, moved all 8).
  items.assign(8, OverflowItem{6700 * 1000, 512});
  const OverflowPlan q = plan(items, 200e-6, rates);
  EXPECT_EQ(q.gpu_items.size(), 3u);
  expect_consistent(items, q, 200e-6, rates);

  // A decode batch beside two such short appends: the appends go first (they save the most CPU
  // per GPU second).
  std::vector<OverflowItem> mixed = decode_items(16, 2 * kMB);
  mixed.insert(mixed.begin() + 5, OverflowItem{3 * kMB, 4});
  mixed.insert(mixed.begin() + 11, OverflowItem{1 * kMB, 4});
  OverflowRates g2;
  g2.group = 2;
  const OverflowPlan m = plan(mixed, 50e-6, g2);
  EXPECT_TRUE(std::find(m.gpu_items.begin(), m.gpu_items.end(), 5) != m.gpu_items.end());
  EXPECT_TRUE(std::find(m.gpu_items.begin(), m.gpu_items.end(), 11) != m.gpu_items.end());
  expect_consistent(mixed, m, 50e-6, g2);
}

TEST(OverflowPolicy, AppendsBalanceWhenTheGpuIsNotFarFaster) {
  // With the default rates, moving all of eight one-tile appends would make the GPU (its reads over
  // the link) the longer side: some stay.
  OverflowRates rates;
  rates.group = 2;
  std::vector<OverflowItem> items(8, OverflowItem{6700 * 1000, 4});
  const OverflowPlan p = plan(items, 200e-6, rates);
  EXPECT_FALSE(p.gpu_items.empty());
  EXPECT_LT(p.gpu_items.size(), items.size());
  const double one_cpu = overflow_cpu_seconds(items[0], rates);
  EXPECT_LE(std::abs(p.cpu_s - p.gpu_s), one_cpu + overflow_gpu_seconds(items[0], rates));
  expect_consistent(items, p, 200e-6, rates);
}

TEST(OverflowPolicy, SkewedDecodeBatchIsBalanced) {
  // 16 sequences × 8 KV heads; one sequence's context sets are 16× the others'.
  const OverflowRates rates;
  std::vector<OverflowItem> items;
  for (int32_t s = 0; s < 16; ++s) {
    for (int32_t h = 0; h < 8; ++h) items.push_back({(s == 3 ? 16 : 1) * kMB + h * 1000, 1});
  }
  const double window = 100e-6;
  const OverflowPlan p = plan(items, window, rates, 0.0);
  ASSERT_FALSE(p.gpu_items.empty());
  expect_consistent(items, p, window, rates);
  // Decode items cost the same per byte on each side, so the fractional optimum moves x bytes with
  // cpu_alone − x·c = window + fixed + x·g; the greedy is within one item's CPU time of it.
  const double c = 1e-9 / rates.cpu_gbps, g = std::max(1e-9 / rates.h2d_gbps, 1e-9 / rates.gpu_gbps);
  const double x = (p.cpu_alone_s - window - rates.gpu_fixed_s) / (c + g);
  const double fractional = p.cpu_alone_s - x * c;
  double largest = 0.0;
  for (const auto& it : items) largest = std::max(largest, overflow_cpu_seconds(it, rates));
  EXPECT_GE(p.critical_s(), fractional - 1e-12);
  EXPECT_LE(p.critical_s(), fractional + largest);
  EXPECT_LT(p.critical_s(), 0.75 * p.critical_alone_s());
  // Equal savings per GPU second: the largest sets go first, so what moves is the skewed
  // sequence's heads (five of its eight balance the step), then at most a few small sets that
  // still fit, not a spread of small sets instead.
  const auto skewed = std::count_if(p.gpu_items.begin(), p.gpu_items.end(), [](int32_t i) { return i / 8 == 3; });
  EXPECT_EQ(skewed, 5);
  EXPECT_LE(p.gpu_items.size(), 5u + 2u);
}

// Random steps (decode and appends, rates over two orders of magnitude): never worse than moving
// nothing, the margin honoured, the account consistent; and, with margin 0 and few enough items
// to enumerate every subset, within the largest item's CPU time (plus the CPU's fixed cost) of the
// best subset.
TEST(OverflowPolicy, NeverWorseThanMovingNothingAndNearTheBestSubset) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  int moved_steps = 0;
  for (int trial = 0; trial < 400; ++trial) {
    OverflowRates rates;
    rates.cpu_gbps = log_uniform(10, 200);
    rates.cpu_row_gbps = log_uniform(50, 2000);
    rates.h2d_gbps = log_uniform(5, 60);
    rates.gpu_gbps = log_uniform(500, 4000);
    rates.gpu_row_gbps = log_uniform(200, 100000);
    rates.gpu_fixed_s = log_uniform(1e-6, 1e-4);
    rates.cpu_fixed_s = trial % 3 == 0 ? 0.0 : log_uniform(1e-6, 1e-4);
    rates.group = 1 + static_cast<int32_t>(rng() % 8);
    const int32_t n = 1 + static_cast<int32_t>(rng() % 12);
    std::vector<OverflowItem> items;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t rows = rng() % 3 == 0 ? 1 + static_cast<int32_t>(rng() % 300) : 1;
      items.push_back({rng() % 8 == 0 ? 0 : static_cast<int64_t>(log_uniform(1e4, 1e8)), rows});
    }
    const double window = log_uniform(1e-6, 1e-2);
    const double margin = trial % 2 == 0 ? 0.0 : unit(rng) * 0.3;
    const OverflowPlan p = plan(items, window, rates, margin);
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_consistent(items, p, window, rates);
    EXPECT_LE(p.critical_s(), p.critical_alone_s());
    if (!p.gpu_items.empty()) {
      ++moved_steps;
      EXPECT_LE(p.critical_s(), (1.0 - margin) * p.critical_alone_s() * (1 + 1e-12));
    }
    for (int32_t i : p.gpu_items) EXPECT_GT(items[i].kv_bytes, 0) << "an empty item moved";
    if (margin == 0.0) {
      double best = p.critical_alone_s(), largest = 0.0;
      for (uint32_t mask = 1; mask < (1u << n); ++mask) {
        std::vector<char> moved(n);
        for (int32_t i = 0; i < n; ++i) moved[i] = (mask >> i) & 1u;
        best = std::min(best, critical_of(items, moved, window, rates));
      }
      for (const auto& it : items) largest = std::max(largest, overflow_cpu_seconds(it, rates));
      EXPECT_LE(p.critical_s(), best + largest + rates.cpu_fixed_s + 1e-15);
    }
  }
  EXPECT_GT(moved_steps, 40);  // the trials exercise moving, not only staying
}

TEST(OverflowPolicy, CostsFollowTheRoofline) {
  OverflowRates r;
  r.cpu_gbps = 100;
  r.cpu_row_gbps = 300;
  r.h2d_gbps = 50;
  r.gpu_gbps = 1000;
  r.gpu_row_gbps = 2000;
  EXPECT_DOUBLE_EQ(overflow_cpu_seconds({1000000000, 1}, r), 1.0 / 100);    // memory-bound
  EXPECT_DOUBLE_EQ(overflow_cpu_seconds({1000000000, 30}, r), 30.0 / 300);  // rows-bound
  // The GPU reads a moved item in place over the link once per tile of 8 (row, head) pairs,
  // computing meanwhile: decode (G = 4: one tile) costs the link's read.
  EXPECT_DOUBLE_EQ(overflow_gpu_seconds({1000000000, 1}, r), 1.0 / 50);
  r.gpu_gbps = 40;  // a GPU slower than the link: its compute is the longer
  EXPECT_DOUBLE_EQ(overflow_gpu_seconds({1000000000, 1}, r), 1.0 / 40);
  // An append of 10 rows: 40 pairs, 5 reads (the model added one read and the attention: 0.025).
  EXPECT_DOUBLE_EQ(overflow_gpu_seconds({1000000000, 10}, r), 5.0 / 50);
  r.group = 1;  // 10 pairs, 2 reads
  EXPECT_DOUBLE_EQ(overflow_gpu_seconds({1000000000, 10}, r), 2.0 / 50);
  r.gpu_row_gbps = 100;  // compute-bound: 10 rows at 100
  EXPECT_DOUBLE_EQ(overflow_gpu_seconds({1000000000, 10}, r), 10.0 / 100);
  EXPECT_EQ(overflow_cpu_seconds({0, 7}, r), 0.0);
}

// Measured on the H200 (session 48 call 7; Hkv 8, G 4, D 128, bf16, 3277 keys per head: 13.4 MB
// read in place from host memory): 16 rows 2.12 ms, 512 rows 67.0 ms; the default rates at G 4 price
// them within 5 % (the model priced them 0.52 and 8.6 ms: appends moved to a GPU 4-8x slower).
TEST(OverflowPolicy, AppendsReadInPlaceCostWhatTheGpuMeasured) {
  Options o;
  o.n_q_heads = 32;
  o.n_kv_heads = 8;
  o.dtype = DType::kBFloat16;
  const OverflowRates r = overflow_rates(o);
  const int64_t bytes = 8 * int64_t{3277} * 2 * 128 * 2;
  EXPECT_NEAR(overflow_gpu_seconds({bytes, 16}, r), 2.117e-3, 0.05 * 2.117e-3);
  EXPECT_NEAR(overflow_gpu_seconds({bytes, 512}, r), 66.97e-3, 0.05 * 66.97e-3);
}

void expect_invalid(const Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

TEST(OverflowPolicy, RefusesBadInputByName) {
  const OverflowRates ok;
  const std::vector<OverflowItem> items = decode_items(3, kMB);
  OverflowPlan out;
  out.bytes_moved = 123;  // left as it was on error
  expect_invalid(plan_overflow(items, -1.0, ok, 0.1, &out), "window_s = -1");
  expect_invalid(plan_overflow(items, NAN, ok, 0.1, &out), "window_s = nan");
  expect_invalid(plan_overflow(items, 0.0, ok, 1.0, &out), "margin = 1");
  expect_invalid(plan_overflow(items, 0.0, ok, -0.5, &out), "margin = -0.5");
  const std::vector<OverflowItem> bad_bytes = {{kMB, 1}, {-5, 1}};
  expect_invalid(plan_overflow(bad_bytes, 0.0, ok, 0.1, &out), "items[1]: kv_bytes = -5");
  const std::vector<OverflowItem> bad_rows = {{kMB, 0}};
  expect_invalid(plan_overflow(bad_rows, 0.0, ok, 0.1, &out), "rows = 0");
  expect_invalid(plan_overflow(items, 0.0, ok, 0.1, nullptr), "out is null");
  auto rates_with = [&](auto change) {
    OverflowRates r = ok;
    change(r);
    return plan_overflow(items, 0.0, r, 0.1, &out);
  };
  expect_invalid(rates_with([](auto& r) { r.cpu_gbps = 0; }), "cpu_gbps = 0");
  expect_invalid(rates_with([](auto& r) { r.cpu_row_gbps = -1; }), "cpu_row_gbps = -1");
  expect_invalid(rates_with([](auto& r) { r.h2d_gbps = INFINITY; }), "h2d_gbps = inf");
  expect_invalid(rates_with([](auto& r) { r.gpu_gbps = NAN; }), "gpu_gbps = nan");
  expect_invalid(rates_with([](auto& r) { r.gpu_row_gbps = 0; }), "gpu_row_gbps = 0");
  expect_invalid(rates_with([](auto& r) { r.gpu_fixed_s = -1e-6; }), "gpu_fixed_s");
  expect_invalid(rates_with([](auto& r) { r.cpu_fixed_s = NAN; }), "cpu_fixed_s");
  expect_invalid(rates_with([](auto& r) { r.window_gbps = 0; }), "window_gbps = 0");
  expect_invalid(rates_with([](auto& r) { r.group = 0; }), "group = 0");
  // Rates whose seconds per byte overflow (an empty item then cost 0 · inf: a NaN plan).
  expect_invalid(rates_with([](auto& r) { r.cpu_gbps = 1e-310; }), "cpu_gbps = 1e-310");
  expect_invalid(rates_with([](auto& r) { r.window_gbps = 1e-4; }), "expected a finite rate ≥ 0.001 GB/s");
  expect_invalid(plan_overflow_all(items, -2.0, ok, &out), "window_s = -2");
  expect_invalid(plan_overflow_all(bad_rows, 0.0, ok, &out), "rows = 0");
  EXPECT_EQ(out.bytes_moved, 123);
  EXPECT_TRUE(check_overflow_rates(ok).is_ok());
}

// overflow = always: every non-empty item moves even where that loses, with the same account.
TEST(OverflowPolicy, AllMovesEveryNonEmptyItem) {
  const OverflowRates rates;
  const std::vector<OverflowItem> items = {{kMB, 1}, {0, 1}, {3 * kMB, 40}, {0, 7}, {kMB / 2, 1}};
  OverflowPlan p;
  ASSERT_TRUE(plan_overflow_all(items, 1.0, rates, &p).is_ok());  // a window far longer than the CPU
  EXPECT_EQ(p.gpu_items, (std::vector<int32_t>{0, 2, 4}));
  EXPECT_EQ(p.bytes_moved, kMB + 3 * kMB + kMB / 2);
  EXPECT_EQ(p.rows_moved, 1 + 40 + 1);
  EXPECT_EQ(p.cpu_s, 0.0);
  EXPECT_GT(p.critical_s(), p.critical_alone_s());  // a loss, moved anyway
  expect_consistent(items, p, 1.0, rates);
  ASSERT_TRUE(plan_overflow_all(decode_items(4, 0), 0.0, rates, &p).is_ok());
  EXPECT_TRUE(p.gpu_items.empty());
  EXPECT_EQ(p.gpu_s, 0.0);  // nothing moved: no fixed cost
}

// The row rates are figures at G = 4 and 2-byte K/V: a runtime of another shape gets them scaled by
// its arithmetic per byte (G / 4 · 2 / element size); the memory rates stay as they are.
TEST(OverflowPolicy, RowRatesFollowTheRuntimesShape) {
  const OverflowRates d;
  auto rates_for = [](int32_t hq, int32_t hkv, DType dt) {
    Options o;
    o.n_q_heads = hq;
    o.n_kv_heads = hkv;
    o.dtype = dt;
    o.overflow_gpu_row_gbps = 1000.0;
    return overflow_rates(o);
  };
  const struct {
    int32_t hq, hkv;
    DType dt;
    double scale;
  } cases[] = {{32, 8, DType::kBFloat16, 1.0}, {32, 4, DType::kBFloat16, 0.5}, {32, 8, DType::kFloat32, 2.0},
               {8, 8, DType::kFloat16, 4.0}};
  for (const auto& c : cases) {
    const OverflowRates r = rates_for(c.hq, c.hkv, c.dt);
    EXPECT_DOUBLE_EQ(r.cpu_row_gbps, d.cpu_row_gbps * c.scale) << c.hq << "/" << c.hkv << " " << to_string(c.dt);
    EXPECT_DOUBLE_EQ(r.gpu_row_gbps, 1000.0 * c.scale) << c.hq << "/" << c.hkv << " " << to_string(c.dt);
    EXPECT_EQ(r.cpu_gbps, d.cpu_gbps);
    EXPECT_EQ(r.window_gbps, d.window_gbps);
  }
}

// The window's part: a call of single-row sequences reads its K+V at window_gbps where the decode
// path serves the shape; a call with an append, or any call of a shape only the generic path takes
// (fp32, other head dims), is priced by the generic path's arithmetic per row.
TEST(OverflowPolicy, WindowSecondsFollowTheWindowsPath) {
  OverflowRates r;
  r.window_gbps = 4000.0;
  r.gpu_row_gbps = 800.0;
  const int64_t gb = 1000000000;
  const std::vector<OverflowItem> decode = {{gb, 1}, {2 * gb, 1}};
  EXPECT_DOUBLE_EQ(overflow_window_seconds(decode, r, true), 3.0 / 4000.0);
  EXPECT_DOUBLE_EQ(overflow_window_seconds(decode, r, false), 3.0 / 800.0);
  const std::vector<OverflowItem> append = {{gb, 1}, {2 * gb, 512}};
  EXPECT_DOUBLE_EQ(overflow_window_seconds(append, r, true), 1.0 / 800.0 + 2.0 * 512 / 800.0);
  // bench/results/gpu-window's append: 512 rows over 4096 + 512 entries, Hkv 8, D 128, bf16: 10 ms measured.
  const std::vector<OverflowItem> measured = {{int64_t{4608} * 8 * 2 * 128 * 2, 512}};
  EXPECT_NEAR(overflow_window_seconds(measured, OverflowRates{}, true), 10e-3, 2.5e-3);
  EXPECT_EQ(overflow_window_seconds({}, r, true), 0.0);
}

// Options' rates: 0 keeps each default, a positive value replaces it.
TEST(OverflowPolicy, RatesFromOptions) {
  Options o;
  o.overflow_cpu_gbps = 42.0;
  o.overflow_window_gbps = 1000.0;
  const OverflowRates r = overflow_rates(o), d;
  EXPECT_EQ(r.cpu_gbps, 42.0);
  EXPECT_EQ(r.window_gbps, 1000.0);
  EXPECT_EQ(r.cpu_row_gbps, d.cpu_row_gbps);
  EXPECT_EQ(r.h2d_gbps, d.h2d_gbps);
  EXPECT_EQ(r.gpu_gbps, d.gpu_gbps);
  EXPECT_EQ(r.gpu_row_gbps, d.gpu_row_gbps);
  EXPECT_EQ(r.gpu_fixed_s, d.gpu_fixed_s);
  EXPECT_TRUE(check_overflow_options(o).is_ok());
  o.overflow_cpu_row_gbps = -1.0;
  expect_invalid(check_overflow_options(o), "overflow_cpu_row_gbps = -1");
  o.overflow_cpu_row_gbps = 0.0;
  o.overflow_window_gbps = 1e-320;  // passed, then made every call's window_s inf: a kInternal at the first plan
  expect_invalid(check_overflow_options(o), "overflow_window_gbps = 1e-320, expected 0 (the default) or a finite rate ≥ 0.001 GB/s");
}

}  // namespace
}  // namespace hgca
