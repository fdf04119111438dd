// The CPU engine's sparse attention against the fp64 reference on every ISA path this CPU has, and
// its schedule: identical bits at every thread count, split and packed tasks, several arenas.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <thread>
#include <tuple>

#include "cpu/sparse_engine.hpp"
#include "hgca/dtype.hpp"
#include "reference/reference.hpp"

namespace hgca {
namespace {

using cpu::SparseEngine;
using cpu::SparseEngineConfig;
using cpu::SparseIsa;
using cpu::SparseItem;

constexpr int64_t kLengths[] = {0, 1, 3, 17, 1000, 5000};

/// Normal values rounded to multiples of 1/16 in (-8, 8): exact in bf16, fp16 and fp32 (the kernels
/// and the reference see the same inputs) and cheap to encode.
std::vector<double> exact_normal(std::mt19937_64& rng, size_t n) {
  std::normal_distribution<double> dist;
  std::vector<double> x(n);
  for (double& e : x) e = std::clamp(std::round(dist(rng) * 16.0), -127.0, 127.0) / 16.0;
  return x;
}

std::vector<std::byte> encode(const std::vector<double>& x, DType dtype) {
  std::vector<std::byte> out(x.size() * dtype_size(dtype));
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<float>(x[i]);
    if (dtype == DType::kFloat32) {
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const uint16_t b = dtype == DType::kBFloat16 ? float_to_bf16(f) : float_to_fp16(f);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}

/// One step's inputs (one item per length of kLengths), in the engine's dtype, and the fp64 result.
struct Case {
  DType dtype;
  int32_t d, group, n_rows;
  float sm_scale;
  std::vector<std::vector<std::byte>> k, v, q;  // per item
  std::vector<std::vector<double>> ref_o, ref_lse;

  /// `ramp` +1 (-1): every query's element 0 is 8 and the keys' element 0 rises (falls) from -8 to 8
  /// along the set, so the scores drift by 34 (at D 128) to 136 (D 8) in natural log units: the
  /// running max moves often, by less and by more than the kernels' rescale margin (or never).
  Case(DType dt, int32_t d_, int32_t g, int32_t rows, uint64_t seed, int ramp = 0)
      : dtype(dt), d(d_), group(g), n_rows(rows) {
    std::mt19937_64 rng(seed);
    // Scores of standard deviation ~3: a peaked softmax, so the running max matters.
    sm_scale = static_cast<float>(3.0 / std::sqrt(static_cast<double>(d)));
    for (int64_t n : kLengths) {
      auto kd = exact_normal(rng, static_cast<size_t>(n * d));
      auto vd = exact_normal(rng, static_cast<size_t>(n * d));
      auto qd = exact_normal(rng, static_cast<size_t>(rows * g * d));
      if (ramp != 0) {
        for (int64_t j = 0; j < n; ++j) {
          const double x = -8.0 + 16.0 * static_cast<double>(j) / static_cast<double>(n);
          kd[static_cast<size_t>(j * d)] = std::clamp(std::round(ramp * x * 16.0), -127.0, 127.0) / 16.0;
        }
        for (int64_t i = 0; i < int64_t{rows} * g; ++i) qd[static_cast<size_t>(i * d)] = 8.0;
      }
      std::vector<double> o, lse;
      ref::attention_over_set(qd, rows, g, kd, vd, n, d, sm_scale, o, lse);
      k.push_back(encode(kd, dtype));
      v.push_back(encode(vd, dtype));
      q.push_back(encode(qd, dtype));
      ref_o.push_back(std::move(o));
      ref_lse.push_back(std::move(lse));
    }
  }
};

/// Outputs of one engine call, poisoned with NaN before it so an unwritten element shows.
struct Result {
  std::vector<std::vector<float>> o, lse;
};

/// Item i's K and V copied into segments laid out as a context cache's (segment 0 of segment_rows
/// rows, each later one as long as all before it), each in an allocation of its own.
struct Segmented {
  std::vector<std::vector<std::byte>> k, v;  // per segment
  std::vector<kvmgr::KvSegment> table;

  Segmented(const Case& c, size_t i, int64_t segment_rows) {
    const auto row = static_cast<int64_t>(c.d * dtype_size(c.dtype));
    for (int64_t first = 0, size = segment_rows; first < kLengths[i]; first += size, size = first) {
      const int64_t n = std::min(size, kLengths[i] - first);
      k.emplace_back(static_cast<size_t>(size * row));
      v.emplace_back(static_cast<size_t>(size * row));
      std::memcpy(k.back().data(), c.k[i].data() + first * row, static_cast<size_t>(n * row));
      std::memcpy(v.back().data(), c.v[i].data() + first * row, static_cast<size_t>(n * row));
      table.push_back({k.back().data(), v.back().data()});
    }
  }
};

/// One engine call over the case's items: contiguous, or (segment_rows > 0) in segments.
Result run(const Case& c, const SparseEngine& engine, tbb::task_arena& arena, int64_t segment_rows = 0,
           cpu::SparseEngineStats* stats = nullptr) {
  Result r;
  std::vector<SparseItem> items;
  std::vector<std::unique_ptr<Segmented>> segmented;
  const size_t rows = static_cast<size_t>(c.n_rows) * c.group;
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    r.o.emplace_back(rows * c.d, std::nanf(""));
    r.lse.emplace_back(rows, std::nanf(""));
  }
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    SparseItem it;
    it.k = c.k[i].data();
    it.v = c.v[i].data();
    it.n = kLengths[i];
    it.q = c.q[i].data();
    it.q_row_stride = static_cast<int64_t>(c.group) * c.d;
    it.n_rows = c.n_rows;
    it.o = r.o[i].data();
    it.o_row_stride = static_cast<int64_t>(c.group) * c.d;
    it.lse = r.lse[i].data();
    it.lse_row_stride = c.group;
    if (segment_rows > 0 && kLengths[i] > 0) {
      const auto& seg = *segmented.emplace_back(std::make_unique<Segmented>(c, i, segment_rows));
      it.k = seg.table[0].k;
      it.v = seg.table[0].v;
      it.segments = seg.table.data();
      it.segment_rows = segment_rows;
    }
    items.push_back(it);
  }
  const Status s = engine.attend(c.dtype, c.group, c.d, c.sm_scale, items, arena, stats);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return r;
}

/// Cases are built once and shared by every ISA's test (the fp64 reference dominates the run time).
const Case& get_case(DType dtype, int32_t d, int32_t group, int32_t rows, int ramp = 0) {
  static std::map<std::tuple<DType, int32_t, int32_t, int32_t, int>, std::unique_ptr<Case>> cache;
  auto& slot = cache[{dtype, d, group, rows, ramp}];
  if (!slot) slot = std::make_unique<Case>(dtype, d, group, rows, 1000u * d + 10u * group + rows, ramp);
  return *slot;
}

void expect_matches_reference(const Case& c, const Result& r, const std::string& what) {
  // fp32 accumulation over up to 5000 keys: per-row relative L2 error well under 1e-4 is expected.
  constexpr double kTolO = 1e-4, kTolLse = 1e-4;
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    const int64_t rows = static_cast<int64_t>(c.n_rows) * c.group;
    for (int64_t q = 0; q < rows; ++q) {
      const std::string at = what + " n=" + std::to_string(kLengths[i]) + " row=" + std::to_string(q);
      std::vector<double> got(c.d), want(c.d);
      for (int32_t e = 0; e < c.d; ++e) {
        got[e] = r.o[i][q * c.d + e];
        want[e] = c.ref_o[i][q * c.d + e];
        ASSERT_FALSE(std::isnan(got[e])) << at;
      }
      const double lse = r.lse[i][q], ref_lse = c.ref_lse[i][q];
      ASSERT_FALSE(std::isnan(lse)) << at;
      if (kLengths[i] == 0) {
        ASSERT_TRUE(std::isinf(lse) && lse < 0) << at << " lse=" << lse;
        for (double x : got) ASSERT_EQ(x, 0.0) << at;
        continue;
      }
      ASSERT_LE(ref::relative_error(got, want), kTolO) << at;
      ASSERT_NEAR(lse, ref_lse, kTolLse * std::max(1.0, std::abs(ref_lse))) << at;
    }
  }
}

std::string fmt_case(SparseIsa isa, DType dtype, int32_t d, int32_t group, int32_t rows) {
  return std::string(cpu::to_string(isa)) + " " + to_string(dtype) + " D=" + std::to_string(d) +
         " G=" + std::to_string(group) + " rows=" + std::to_string(rows);
}

/// An engine on the parameter's ISA path (the test skipped where this CPU lacks it).
class SparseEngineIsa : public ::testing::TestWithParam<std::tuple<SparseIsa, DType>> {
 protected:
  void SetUp() override {
    if (!cpu::isa_supported(isa)) {
      GTEST_SKIP() << "ISA path " << cpu::to_string(isa) << " skipped: this CPU (or build) lacks it";
    }
    SparseEngineConfig cfg;
    cfg.isa = isa;
    engine = std::make_unique<SparseEngine>(cfg);
    ASSERT_EQ(engine->isa(), isa);
  }
  const SparseIsa isa = std::get<0>(GetParam());
  const DType dtype = std::get<1>(GetParam());
  std::unique_ptr<SparseEngine> engine;
  tbb::task_arena arena;
};

TEST_P(SparseEngineIsa, MatchesReference) {
  for (int32_t d : {8, 24, 40, 64, 120, 128, 256}) {  // 40, 120: a partial last chunk of 2W elements
    for (int32_t group : {1, 2, 5, 8}) {
      for (int32_t rows : {1, 3}) {
        const Case& c = get_case(dtype, d, group, rows);
        expect_matches_reference(c, run(c, *engine, arena), fmt_case(isa, dtype, d, group, rows));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Scores that drift along the set (the running max moves block after block, or only in the first)
// give the reference's answer on every path.
TEST_P(SparseEngineIsa, DriftingScoresMatchReference) {
  for (int ramp : {1, -1}) {
    for (int32_t d : {8, 128}) {
      for (int32_t rows : {1, 3}) {
        const Case& c = get_case(dtype, d, 4, rows, ramp);
        expect_matches_reference(c, run(c, *engine, arena),
                                 fmt_case(isa, dtype, d, 4, rows) + " ramp=" + std::to_string(ramp));
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, SparseEngineIsa,
    ::testing::Combine(::testing::Values(SparseIsa::kPortable, SparseIsa::kAvx2, SparseIsa::kAvx512, SparseIsa::kAvx512Bf16),
                       ::testing::Values(DType::kBFloat16, DType::kFloat16, DType::kFloat32)),
    [](const auto& test) {
      return std::string(cpu::to_string(std::get<0>(test.param))) + "_" + to_string(std::get<1>(test.param));
    });

// --- a re-evaluation's key weights (add_key_weights) ---

class KeyWeightsIsa : public ::testing::TestWithParam<std::tuple<SparseIsa, DType>> {};

/// Per head g, the kernel's sums over the rows against n_rows × the fp64 reference's mean for that
/// head alone, the keys in runs of uneven lengths (a store's blocks, a partial last one), the sums
/// added to what acc held.
TEST_P(KeyWeightsIsa, MatchesReference) {
  const auto [isa, dtype] = GetParam();
  if (!cpu::isa_supported(isa)) {
    GTEST_SKIP() << "ISA path " << cpu::to_string(isa) << " skipped: this CPU (or build) lacks it";
  }
  std::mt19937_64 rng(11);
  for (int32_t d : {8, 24, 40, 64, 120, 128, 256}) {
    for (int32_t group : {1, 3, 8}) {
      for (int32_t rows : {1, 2, 5}) {
        for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{64}, int64_t{65}, int64_t{700}}) {
          const std::string what = fmt_case(isa, dtype, d, group, rows) + " n=" + std::to_string(n);
          const auto q = exact_normal(rng, static_cast<size_t>(rows) * group * d);
          const auto k = exact_normal(rng, static_cast<size_t>(n) * d);
          const auto qb = encode(q, dtype), kb = encode(k, dtype);
          std::vector<cpu::arch::KvRun> runs;
          for (int64_t at = 0; at < n;) {  // runs of 37, 64, 1, 64, 37 … keys
            const int64_t len = std::min<int64_t>(n - at, std::vector<int64_t>{37, 64, 1, 64}[runs.size() % 4]);
            runs.push_back({kb.data() + at * d * dtype_size(dtype), nullptr, len});
            at += len;
          }
          constexpr float kBase = 0.25f;
          std::vector<float> acc(static_cast<size_t>(group) * n, kBase);
          std::vector<float> work(static_cast<size_t>(cpu::arch::weights_work_floats(rows, group, d, n)));
          cpu::arch::WeightsParams p;
          p.n = n;
          p.runs = runs.data();
          p.n_runs = static_cast<int32_t>(runs.size());
          p.q = qb.data();
          p.q_row_stride = int64_t{group} * d;
          p.n_rows = rows;
          p.group = group;
          p.head_dim = d;
          p.sm_scale = 0.3f;
          p.acc = acc.data();
          p.work = work.data();
          cpu::add_key_weights(isa, dtype, p);
          for (int32_t g = 0; g < group; ++g) {
            std::vector<double> qg;
            for (int32_t r = 0; r < rows; ++r) {
              qg.insert(qg.end(), q.begin() + (int64_t{r} * group + g) * d, q.begin() + (int64_t{r} * group + g + 1) * d);
            }
            const auto mean = ref::maw_observation(qg, rows, 1, k, n, d, 0.3f, -1);
            for (int64_t t = 0; t < n; ++t) {
              const double want = kBase + rows * mean[t];
              ASSERT_NEAR(acc[g * n + t], want, 1e-5 * want) << what << " head " << g << " key " << t;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, KeyWeightsIsa,
    ::testing::Combine(::testing::Values(SparseIsa::kPortable, SparseIsa::kAvx2, SparseIsa::kAvx512, SparseIsa::kAvx512Bf16),
                       ::testing::Values(DType::kBFloat16, DType::kFloat16, DType::kFloat32)),
    [](const auto& test) {
      return std::string(cpu::to_string(std::get<0>(test.param))) + "_" + to_string(std::get<1>(test.param));
    });

bool same_bits(const Result& a, const Result& b) {
  for (size_t i = 0; i < a.o.size(); ++i) {
    if (std::memcmp(a.o[i].data(), b.o[i].data(), a.o[i].size() * sizeof(float)) != 0) return false;
    if (std::memcmp(a.lse[i].data(), b.lse[i].data(), a.lse[i].size() * sizeof(float)) != 0) return false;
  }
  return true;
}

// The schedule depends on the items and the config, never on the thread count.
TEST(SparseEngine, IdenticalBitsAtEveryThreadCount) {
  const int all = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (const SparseEngineConfig cfg : {SparseEngineConfig{}, SparseEngineConfig{SparseIsa::kAuto, 256, 0},
                                       SparseEngineConfig{SparseIsa::kAuto, 700, 2}}) {
    const SparseEngine engine(cfg);
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      const Case& c = get_case(dtype, 64, 4, 3);
      tbb::task_arena one(1), two(2), every(all);
      const Result r1 = run(c, engine, one);
      expect_matches_reference(c, r1, "threads=1");
      EXPECT_TRUE(same_bits(r1, run(c, engine, two))) << "threads=2 split=" << cfg.kv_split_tokens;
      EXPECT_TRUE(same_bits(r1, run(c, engine, every))) << "threads=" << all << " split=" << cfg.kv_split_tokens;
    }
  }
}

// Splitting a long context set into chunks merged by LSE, and packing small heads into one task,
// both give the reference's answer; the split size in use is reported.
TEST(SparseEngine, SplitAndPackedTasksMatchReference) {
  const Case& c = get_case(DType::kBFloat16, 128, 8, 1);
  tbb::task_arena arena;
  // A split of 2 leaves sets of 3 keys in one range of 16 (whole 16-key groups).
  for (int64_t split : {int64_t{2}, int64_t{16}, int64_t{100}, int64_t{4096}, int64_t{1} << 20}) {
    for (int32_t heads : {0, 1, 4}) {
      const SparseEngine engine({SparseIsa::kAuto, split, heads});
      expect_matches_reference(c, run(c, engine, arena),
                               "split=" + std::to_string(split) + " max_packed_heads=" + std::to_string(heads));
    }
  }
}

// An append's many query rows are cut into blocks of rows before its keys are cut: a block attends
// all keys and writes its rows directly (same kernel path as the whole item: same bits), so the
// partial states of key chunks stay a few rows' worth — a chunk of a cut item holds fewer than 32
// queries' (o, lse) — however many rows the append has (before, each chunk held all of them).
TEST(SparseEngine, AppendsAreCutByRowsBeforeKeys) {
  const Case& c = get_case(DType::kBFloat16, 64, 4, 40);  // 160 queries per item
  tbb::task_arena arena;
  const SparseEngine whole({SparseIsa::kAuto, int64_t{1} << 40, 0});
  cpu::SparseEngineStats st;
  const Result want = run(c, whole, arena, 0, &st);
  expect_matches_reference(c, want, "one task per item");
  EXPECT_EQ(st.partial_bytes, 0);
  // 5000 keys × ceil(160 / 16) = 50000 keys' work in 10 pieces: 10 blocks of 4 rows, keys whole.
  const SparseEngine rows({SparseIsa::kAuto, 5000, 0});
  EXPECT_TRUE(same_bits(want, run(c, rows, arena, 0, &st))) << "cut by rows only";
  EXPECT_EQ(st.partial_bytes, 0);
  EXPECT_GE(st.tasks, 10);
  // Cut by rows and keys (50 pieces: 10 blocks × 5 key chunks), and the engine's own split.
  const int all = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (const int64_t split : {int64_t{1000}, int64_t{0}}) {
    const SparseEngine engine({SparseIsa::kAuto, split, 0});
    tbb::task_arena one(1), every(all);
    const Result r = run(c, engine, one, 0, &st);
    const std::string what = "split=" + std::to_string(split);
    expect_matches_reference(c, r, what);
    EXPECT_GT(st.partial_bytes, 0) << what;
    EXPECT_LE(st.partial_bytes, st.tasks * 31 * (c.d + 1) * int64_t{sizeof(float)} + st.tasks * 64) << what;
    EXPECT_TRUE(same_bits(r, run(c, engine, every))) << what << " threads=" << all;
  }
  // A small split (as hgca-tune may choose for decode) cuts keys only while a cut item has fewer
  // than 256 tasks: 5000 keys × 10 work units at split 16 would be 3125 pieces, 313 key chunks
  // of each of the 10 row blocks.
  const SparseEngine tiny({SparseIsa::kAuto, 16, 0});
  expect_matches_reference(c, run(c, tiny, arena, 0, &st), "split=16");
  EXPECT_LE(st.tasks, static_cast<int64_t>(std::size(kLengths)) * 256);
  EXPECT_LE(st.partial_bytes, st.tasks * 31 * (c.d + 1) * int64_t{sizeof(float)} + st.tasks * 64);
}

// Context sets in segments (as context caches hold them past their first segment), which the
// kernels attend run after run in one pass, give the reference's answer on every ISA path with
// every split and packing, and identical bits at every thread count.
TEST(SparseEngine, SegmentedContextSetsMatchReference) {
  const int all = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (const SparseIsa isa : {SparseIsa::kPortable, SparseIsa::kAvx2, SparseIsa::kAvx512, SparseIsa::kAvx512Bf16}) {
    if (!cpu::isa_supported(isa)) {
      std::cout << "[ skipped  ] segmented sets on " << cpu::to_string(isa) << ": this CPU (or build) lacks it\n";
      continue;
    }
    for (DType dtype : {DType::kBFloat16, DType::kFloat32}) {
      const Case& c = get_case(dtype, 64, 4, 3);
      for (int64_t segment_rows : {int64_t{1}, int64_t{16}, int64_t{64}, int64_t{512}}) {
        for (const SparseEngineConfig cfg : {SparseEngineConfig{isa, 0, 0}, SparseEngineConfig{isa, 100, 0},
                                             SparseEngineConfig{isa, int64_t{1} << 20, 2}}) {
          const std::string what = std::string(cpu::to_string(isa)) + " " + to_string(dtype) +
                                   " segment_rows=" + std::to_string(segment_rows) + " split=" +
                                   std::to_string(cfg.kv_split_tokens);
          const SparseEngine engine(cfg);
          tbb::task_arena one(1), two(2), every(all);
          const Result r1 = run(c, engine, one, segment_rows);
          expect_matches_reference(c, r1, what);
          if (HasFatalFailure()) return;
          EXPECT_TRUE(same_bits(r1, run(c, engine, two, segment_rows))) << what << " threads=2";
          EXPECT_TRUE(same_bits(r1, run(c, engine, every, segment_rows))) << what << " threads=" << all;
        }
      }
    }
  }
}

// Items tagged with nodes run in their nodes' arenas, concurrently, with the one-arena result.
TEST(SparseEngine, ItemsRunInTheirNodesArenas) {
  const Case& c = get_case(DType::kFloat16, 64, 2, 1);
  const SparseEngine engine;
  tbb::task_arena a0(1), a1(1);
  const Result want = run(c, engine, a0);
  Result r;
  std::vector<SparseItem> items;
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    r.o.emplace_back(static_cast<size_t>(2 * 64), std::nanf(""));
    r.lse.emplace_back(2, std::nanf(""));
  }
  for (size_t i = 0; i < std::size(kLengths); ++i) {
    items.push_back({c.k[i].data(), c.v[i].data(), kLengths[i], c.q[i].data(), 128, 1, r.o[i].data(), 128,
                     r.lse[i].data(), 2, static_cast<int32_t>(i % 2)});
  }
  tbb::task_arena* arenas[] = {&a0, &a1};
  ASSERT_TRUE(engine.attend(c.dtype, 2, 64, c.sm_scale, items, arenas).is_ok());
  EXPECT_TRUE(same_bits(want, r));
}

TEST(SparseEngine, RejectsBadArguments) {
  const SparseEngine engine;
  tbb::task_arena arena(1);
  float o[64], lse[1];
  uint16_t q[64] = {};
  SparseItem it{nullptr, nullptr, 0, q, 64, 1, o, 64, lse, 1, 0};
  EXPECT_EQ(engine.attend(DType::kBFloat16, 1, 12, 1.0f, {&it, 1}, arena).code(), StatusCode::kUnsupported);
  EXPECT_EQ(engine.attend(DType::kBFloat16, 0, 64, 1.0f, {&it, 1}, arena).code(), StatusCode::kInvalidArgument);
  it.node = 1;
  EXPECT_EQ(engine.attend(DType::kBFloat16, 1, 64, 1.0f, {&it, 1}, arena).code(), StatusCode::kInvalidArgument);
  it.node = 0;
  it.n = 5;  // keys without k, v
  EXPECT_EQ(engine.attend(DType::kBFloat16, 1, 64, 1.0f, {&it, 1}, arena).code(), StatusCode::kInvalidArgument);
  it.n = 0;
  const kvmgr::KvSegment table[1] = {{q, q}};
  it.segments = table;  // segments without segment_rows
  EXPECT_EQ(engine.attend(DType::kBFloat16, 1, 64, 1.0f, {&it, 1}, arena).code(), StatusCode::kInvalidArgument);
  it.segments = nullptr;
  ASSERT_TRUE(engine.attend(DType::kBFloat16, 1, 64, 1.0f, {&it, 1}, arena).is_ok());
  EXPECT_TRUE(std::isinf(lse[0]) && lse[0] < 0);
}

// A kernel's per-thread scratch that cannot be had is std::bad_alloc (the runtime's call then fails
// with kOutOfMemory, as for any allocation), not the end of the process: 2^20 rows of a group of 8
// at D = 256 want 16 GiB of scratch, refused under an address-space limit (which overcommit does
// not lift); the queries are not read once it is refused.
TEST(SparseEngine, ScratchThatCannotBeHadIsBadAlloc) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "skipped under AddressSanitizer: its shadow memory does not fit an address-space limit";
#else
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  ASSERT_GT(pages, 0);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  rlimit limit = old;
  limit.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{4} << 30);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < limit.rlim_cur) limit.rlim_cur = old.rlim_cur;
  std::vector<uint16_t> kv(16 * 256);
  float o[1], lse[1];
  uint16_t q[1] = {};
  for (SparseIsa isa : {SparseIsa::kPortable, SparseIsa::kAvx2, SparseIsa::kAvx512, SparseIsa::kAvx512Bf16}) {
    if (!cpu::isa_supported(isa)) continue;
    const SparseEngine engine(SparseEngineConfig{isa, int64_t{1} << 40, 0});  // the item in one task
    tbb::task_arena arena(1);
    SparseItem it{kv.data(), kv.data(), 16, q, 8 * 256, 1 << 20, o, 8 * 256, lse, 8, 0};
    ASSERT_EQ(setrlimit(RLIMIT_AS, &limit), 0);
    bool threw = false;
    try {
      (void)engine.attend(DType::kBFloat16, 8, 256, 1.0f, {&it, 1}, arena);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
    EXPECT_TRUE(threw) << cpu::to_string(isa);
  }
#endif
}

}  // namespace
}  // namespace hgca
