// The GPU sparse attention against the fp64 reference and against the CPU engine on the same items:
// every dtype, GQA groups 1–8, head dims 8–256, decode and appends, context sets of 0 to thousands
// of keys in one ragged launch, strided rows whose gaps must stay untouched, plans that do not fit
// the items, long unsplit items whose running max moves from sub-chunk to sub-chunk, keys in
// segments, unaligned K/V, items and K/V in mapped host memory, and items rewritten between replays of a captured graph.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/sparse_engine.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/sparse_attention.hpp"
#include "reference/reference.hpp"

namespace hgca::gpu {
namespace {

using test::DevBuf;

/// Relative L2 error of each (row, head) output against the reference. The inputs are rounded to
/// the dtype before the reference sees them and the kernel works in fp32 up to o (fp32), so these
/// bound fp32 accumulation only: the CPU engine's figure for 16-bit K/V (a weight rounded to 16
/// bits before the V pass would exceed it).
double tolerance(DType dtype) { return dtype == DType::kFloat32 ? 1e-5 : 1e-4; }
constexpr double kLseRel = 1e-5;  // |Δ lse| ≤ kLseRel · max(1, |lse|)

struct ItemSpec {
  int64_t n;
  int32_t rows;
};

/// One launch's items packed into shared buffers, with gaps between rows (poisoned in q with NaN,
/// which must not leak into any result, and in o / lse, where they must stay NaN), the fp64
/// reference and the CPU engine's result on the same encoded inputs.
struct Batch {
  DType dtype;
  int32_t group, d;
  float sm_scale;
  std::vector<ItemSpec> specs;
  std::size_t es;                           // bytes per element
  int64_t q_stride, o_stride, lse_stride;   // per row, elements
  std::vector<int64_t> kv_at, q_at, o_at, lse_at;  // per item, elements
  std::vector<std::byte> k, v, q;           // encoded
  int64_t o_elems = 0, lse_elems = 0;
  std::vector<std::vector<double>> ref_o, ref_lse;  // per item: [rows][G][D], [rows][G]
  std::vector<float> cpu_o, cpu_lse;

  /// kv_shift: elements added to every item's K/V offset (1: rows no longer 16-byte aligned).
  /// rising: keys drift towards the queries along the set, so the running max keeps moving.
  Batch(DType dt, int32_t g, int32_t dim, std::vector<ItemSpec> items, uint64_t seed, int64_t kv_shift = 0,
        bool rising = false)
      : dtype(dt), group(g), d(dim), specs(std::move(items)), es(dtype_size(dt)) {
    std::mt19937_64 rng(seed);
    sm_scale = static_cast<float>(3.0 / std::sqrt(static_cast<double>(d)));  // peaked softmax
    q_stride = int64_t{g} * d + 8;
    o_stride = int64_t{g} * d + 8;
    lse_stride = g + 1;
    int64_t kv_elems = 0, q_elems = 0;
    for (const ItemSpec& s : specs) {
      kv_at.push_back(kv_elems + kv_shift);
      kv_elems += (s.n * d + kv_shift + 63) / 64 * 64;
      q_at.push_back(q_elems);
      q_elems += s.rows * q_stride;
      o_at.push_back(o_elems);
      o_elems += s.rows * o_stride;
      lse_at.push_back(lse_elems);
      lse_elems += s.rows * lse_stride;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> kd(kv_elems, 0.0), vd(kv_elems, 0.0), qd(q_elems, nan);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto [n, rows] = specs[i];
      const std::vector<double> dir = ref::normal(rng, d);
      auto ki = ref::normal(rng, n * d), vi = ref::normal(rng, n * d);
      auto qi = ref::normal(rng, int64_t{rows} * g * d, rising ? 0.3 : 1.0);
      if (rising) {
        for (int64_t j = 0; j < n; ++j)
          for (int32_t e = 0; e < d; ++e) ki[j * d + e] += 2.0 * static_cast<double>(j) / static_cast<double>(n) * dir[e];
        for (int64_t x = 0; x < int64_t{rows} * g; ++x)
          for (int32_t e = 0; e < d; ++e) qi[x * d + e] += dir[e];
      }
      ki = ref::round_to(ki, dtype);
      vi = ref::round_to(vi, dtype);
      qi = ref::round_to(qi, dtype);
      std::copy(ki.begin(), ki.end(), kd.begin() + kv_at[i]);
      std::copy(vi.begin(), vi.end(), vd.begin() + kv_at[i]);
      for (int32_t r = 0; r < rows; ++r)
        std::copy_n(qi.begin() + int64_t{r} * g * d, int64_t{g} * d, qd.begin() + q_at[i] + r * q_stride);
      std::vector<double> o, lse;
      ref::attention_over_set(qi, rows, g, ki, vi, n, d, sm_scale, o, lse);
      ref_o.push_back(std::move(o));
      ref_lse.push_back(std::move(lse));
    }
    k = ref::encode(kd, dtype);
    v = ref::encode(vd, dtype);
    q = ref::encode(qd, dtype);
    run_cpu_engine();
  }

  /// The items with pointers into the given copies of the buffers.
  std::vector<SparseAttentionItem> items(const std::byte* kb, const std::byte* vb, const std::byte* qb, float* ob,
                                         float* lb) const {
    std::vector<SparseAttentionItem> out;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      out.push_back({kb + kv_at[i] * es, vb + kv_at[i] * es, specs[i].n, qb + q_at[i] * es, q_stride,
                     specs[i].rows, ob + o_at[i], o_stride, lb + lse_at[i], lse_stride});
    }
    return out;
  }

  SparseAttentionShape shape() const {
    SparseAttentionShape s;
    s.n_items = static_cast<int32_t>(specs.size());
    for (const ItemSpec& it : specs) {
      s.max_n = std::max(s.max_n, it.n);
      s.total_n += it.n;
      s.max_rows = std::max(s.max_rows, it.rows);
    }
    return s;
  }

  void run_cpu_engine() {
    cpu_o.assign(o_elems, std::nanf(""));
    cpu_lse.assign(lse_elems, std::nanf(""));
    std::vector<cpu::SparseItem> cpu_items;
    for (const SparseAttentionItem& it : items(k.data(), v.data(), q.data(), cpu_o.data(), cpu_lse.data())) {
      cpu_items.push_back({it.k, it.v, it.n, it.q, it.q_row_stride, it.n_rows, it.o, it.o_row_stride, it.lse,
                           it.lse_row_stride, 0});
    }
    tbb::task_arena arena(2);
    const Status s = cpu::SparseEngine().attend(dtype, group, d, sm_scale, cpu_items, arena);
    ASSERT_TRUE(s.is_ok()) << s.message();
  }

  std::string name() const {
    return std::string(to_string(dtype)) + " G" + std::to_string(group) + " D" + std::to_string(d);
  }
};

int sm_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

/// Compares one result (o, lse in the batch's layout) with a reference per item: relative L2 error
/// per (row, head), LSE, the empty-item convention, untouched gaps, no NaN, a non-zero output.
void expect_matches(const Batch& b, const std::vector<float>& o, const std::vector<float>& lse,
                    const std::vector<std::vector<double>>& want_o, const std::vector<std::vector<double>>& want_lse,
                    const std::string& what) {
  SCOPED_TRACE(b.name() + " vs " + what);
  const double tol = tolerance(b.dtype);
  std::vector<char> written_o(o.size(), 0), written_lse(lse.size(), 0);
  double norm = 0.0;
  int failures = 0;
  for (std::size_t i = 0; i < b.specs.size() && failures < 8; ++i) {
    const auto [n, rows] = b.specs[i];
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t g = 0; g < b.group; ++g) {
        const int64_t at = b.o_at[i] + r * b.o_stride + int64_t{g} * b.d;
        const int64_t want_at = (int64_t{r} * b.group + g) * b.d;
        const std::string where = "item " + std::to_string(i) + " (n " + std::to_string(n) + ", rows " +
                                  std::to_string(rows) + ") row " + std::to_string(r) + " head " + std::to_string(g);
        std::vector<double> got(o.begin() + at, o.begin() + at + b.d);
        std::fill_n(written_o.begin() + at, b.d, 1);
        const double l = lse[b.lse_at[i] + r * b.lse_stride + g];
        const double want_l = want_lse[i][int64_t{r} * b.group + g];
        written_lse[b.lse_at[i] + r * b.lse_stride + g] = 1;
        if (n == 0) {
          const bool zero = std::all_of(got.begin(), got.end(), [](double x) { return x == 0.0; });
          if ((!zero || !(std::isinf(l) && l < 0)) && failures++ < 8)
            ADD_FAILURE() << where << ": expected o = 0 and lse = -inf, got lse " << l;
          continue;
        }
        const std::vector<double> want(want_o[i].begin() + want_at, want_o[i].begin() + want_at + b.d);
        const double err = ref::relative_error(got, want);
        if (!(err <= tol) && failures++ < 8) ADD_FAILURE() << where << ": relative error " << err << " > " << tol;
        if (!(std::abs(l - want_l) <= kLseRel * std::max(1.0, std::abs(want_l))) && failures++ < 8)
          ADD_FAILURE() << where << ": lse " << l << ", expected " << want_l;
        for (double x : got) norm += x * x;
      }
    }
  }
  for (std::size_t e = 0; e < o.size(); ++e) {
    if (!written_o[e] && !std::isnan(o[e]) && failures++ < 8) ADD_FAILURE() << "o gap " << e << " was written";
  }
  for (std::size_t e = 0; e < lse.size(); ++e) {
    if (!written_lse[e] && !std::isnan(lse[e]) && failures++ < 8) ADD_FAILURE() << "lse gap " << e << " was written";
  }
  const bool any_keys = std::any_of(b.specs.begin(), b.specs.end(), [](const ItemSpec& s) { return s.n > 0; });
  if (any_keys) {
    EXPECT_GT(norm, 0.0);
  }
}

/// Both comparisons: against the fp64 reference and against the CPU engine (as fp64).
void expect_correct(const Batch& b, const std::vector<float>& o, const std::vector<float>& lse,
                    const std::string& how) {
  expect_matches(b, o, lse, b.ref_o, b.ref_lse, "fp64 reference, " + how);
  std::vector<std::vector<double>> cpu_o, cpu_lse;
  for (std::size_t i = 0; i < b.specs.size(); ++i) {
    const auto [n, rows] = b.specs[i];
    std::vector<double> oi, li;
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t g = 0; g < b.group; ++g) {
        const int64_t at = b.o_at[i] + r * b.o_stride + int64_t{g} * b.d;
        oi.insert(oi.end(), b.cpu_o.begin() + at, b.cpu_o.begin() + at + b.d);
        li.push_back(b.cpu_lse[b.lse_at[i] + r * b.lse_stride + g]);
      }
    }
    cpu_o.push_back(std::move(oi));
    cpu_lse.push_back(std::move(li));
  }
  expect_matches(b, o, lse, cpu_o, cpu_lse, "CPU engine, " + how);
}

/// The batch's K and V in device memory as context caches hold them past their first segment:
/// each item's rows in segments (segment 0 of segment_rows rows, each later one as long as all
/// before it), the segments placed back to front (no two of an item adjacent), and each item's
/// segment table in device memory too. `unaligned`: every segment past an item's first starts one
/// element off 16-byte alignment, its first stays aligned.
struct DeviceSegments {
  std::vector<kvmgr::KvSegment> tables;  // device addresses, each item's from table_at[i]
  std::vector<std::size_t> table_at;
  std::unique_ptr<DevBuf<std::byte>> rows;
  std::unique_ptr<DevBuf<kvmgr::KvSegment>> d_tables;

  DeviceSegments(const Batch& b, int64_t segment_rows, bool unaligned) {
    const auto row = static_cast<int64_t>(b.d * b.es);
    struct Piece {
      const std::byte *k, *v;
      int64_t n, size;
      bool first;
    };
    std::vector<Piece> pieces;
    for (std::size_t i = 0; i < b.specs.size(); ++i) {
      table_at.push_back(pieces.size());
      for (int64_t first = 0, size = segment_rows; first < b.specs[i].n; first += size, size = first) {
        pieces.push_back({b.k.data() + (b.kv_at[i] * b.es) + first * row, b.v.data() + (b.kv_at[i] * b.es) + first * row,
                          std::min(size, b.specs[i].n - first), size, first == 0});
      }
    }
    // Each half padded by 16 bytes, so that a segment can start one element in.
    auto half_of = [&](const Piece& pc) { return static_cast<std::size_t>(pc.size * row) + 16; };
    std::size_t total = 0;
    for (const Piece& pc : pieces) total += 2 * half_of(pc);
    rows = std::make_unique<DevBuf<std::byte>>(std::max<std::size_t>(total, 16));
    std::vector<std::byte> host(total);
    std::size_t at = total;
    for (const Piece& pc : pieces) {  // back to front
      const std::size_t half = half_of(pc), off = unaligned && !pc.first ? b.es : 0;
      at -= 2 * half;
      std::memcpy(host.data() + at + off, pc.k, static_cast<std::size_t>(pc.n * row));
      std::memcpy(host.data() + at + half + off, pc.v, static_cast<std::size_t>(pc.n * row));
      tables.push_back({rows->p + at + off, rows->p + at + half + off});
    }
    EXPECT_EQ(cudaMemcpy(rows->p, host.data(), total, cudaMemcpyHostToDevice), cudaSuccess);
    d_tables = std::make_unique<DevBuf<kvmgr::KvSegment>>(std::max<std::size_t>(tables.size(), 1));
    EXPECT_EQ(cudaMemcpy(d_tables->p, tables.data(), tables.size() * sizeof(tables[0]), cudaMemcpyHostToDevice), cudaSuccess);
  }

  /// Items with keys point into the segments.
  void repoint(const Batch& b, std::vector<SparseAttentionItem>& items, int64_t segment_rows) const {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (b.specs[i].n == 0) continue;
      items[i].k = tables[table_at[i]].k;
      items[i].v = tables[table_at[i]].v;
      items[i].segments = d_tables->p + table_at[i];
      items[i].segment_rows = segment_rows;
    }
  }
};

/// Runs the batch from device memory with `plan` (default: planned for the batch's own shape), its
/// keys in segments when segment_rows > 0 (those past an item's first unaligned with
/// `unaligned_segments`); returns o and lse as the launch left them (poisoned with NaN before).
void run_device(const Batch& b, std::vector<float>& o, std::vector<float>& lse, const SparseAttentionPlan* plan = nullptr,
                int64_t segment_rows = 0, bool unaligned_segments = false) {
  DevBuf<std::byte> dk(b.k.size()), dv(b.v.size()), dq(b.q.size());
  DevBuf<float> d_o(b.o_elems), d_lse(b.lse_elems);
  DevBuf<SparseAttentionItem> d_items(b.specs.size());
  CUDA_OK(cudaMemcpy(dk.p, b.k.data(), b.k.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dv.p, b.v.data(), b.v.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dq.p, b.q.data(), b.q.size(), cudaMemcpyHostToDevice));
  o.assign(b.o_elems, std::nanf(""));
  lse.assign(b.lse_elems, std::nanf(""));
  CUDA_OK(cudaMemcpy(d_o.p, o.data(), o.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_lse.p, lse.data(), lse.size() * 4, cudaMemcpyHostToDevice));
  auto items = b.items(dk.p, dv.p, dq.p, d_o.p, d_lse.p);
  std::optional<DeviceSegments> segments;
  if (segment_rows > 0) segments.emplace(b, segment_rows, unaligned_segments).repoint(b, items, segment_rows);
  CUDA_OK(cudaMemcpy(d_items.p, items.data(), items.size() * sizeof(items[0]), cudaMemcpyHostToDevice));

  SparseAttentionParams p;
  p.dtype = b.dtype;
  p.group = b.group;
  p.head_dim = b.d;
  p.sm_scale = b.sm_scale;
  p.items = d_items.p;
  p.n_items = static_cast<int32_t>(items.size());
  p.plan = plan ? *plan : plan_sparse_attention(b.shape(), b.group, sm_count());
  p.workspace_bytes = sparse_attention_workspace_bytes(p.plan, p.n_items, p.head_dim);
  DevBuf<std::byte> ws(p.workspace_bytes);
  p.workspace = ws.p;
  const Status ok = check_sparse_attention(p, items);
  ASSERT_TRUE(ok.is_ok()) << ok.message();
  CUDA_OK(static_cast<cudaError_t>(launch_sparse_attention(p, nullptr)));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(o.data(), d_o.p, o.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(lse.data(), d_lse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
}

std::string plan_name(const SparseAttentionPlan& p) {
  return "plan tile_pairs " + std::to_string(p.tile_pairs) + " tiles " + std::to_string(p.tiles) + " kv_splits " +
         std::to_string(p.kv_splits) + " split_pairs " + std::to_string(p.split_pairs);
}

void run_and_check(const Batch& b, const SparseAttentionPlan* plan = nullptr, int64_t segment_rows = 0,
                   bool unaligned_segments = false) {
  std::vector<float> o, lse;
  run_device(b, o, lse, plan, segment_rows, unaligned_segments);
  if (::testing::Test::HasFatalFailure()) return;
  expect_correct(b, o, lse, plan_name(plan ? *plan : plan_sparse_attention(b.shape(), b.group, sm_count())) +
                                " segment_rows " + std::to_string(segment_rows) +
                                (unaligned_segments ? " (later segments unaligned)" : ""));
}

// Lengths 0 to thousands in one ragged launch: the default plan splits the long ones.
const std::vector<int64_t> kLengths = {0, 1, 3, 17, 100, 1000, 5000};

std::vector<ItemSpec> ragged(int32_t rows) {
  std::vector<ItemSpec> s;
  for (int64_t n : kLengths) s.push_back({n, rows});
  return s;
}

using SweepParam = std::tuple<DType, int32_t, int32_t>;
class SparseAttentionSweep : public ::testing::TestWithParam<SweepParam> {};

TEST_P(SparseAttentionSweep, DecodeRagged) {
  const auto [dtype, group, d] = GetParam();
  run_and_check(Batch(dtype, group, d, ragged(1), 100u * d + group));
}

TEST_P(SparseAttentionSweep, AppendRagged) {
  const auto [dtype, group, d] = GetParam();
  run_and_check(Batch(dtype, group, d, ragged(7), 100u * d + group + 1));
}

INSTANTIATE_TEST_SUITE_P(
    All, SparseAttentionSweep,
    ::testing::Combine(::testing::Values(DType::kFloat32, DType::kFloat16, DType::kBFloat16),
                       ::testing::Values(1, 2, 3, 4, 5, 8), ::testing::Values(8, 24, 64, 128, 136, 256)),
    [](const ::testing::TestParamInfo<SweepParam>& param_info) {
      return std::string(to_string(std::get<0>(param_info.param))) + "_G" +
             std::to_string(std::get<1>(param_info.param)) + "_D" + std::to_string(std::get<2>(param_info.param));
    });

// Many query rows: tiles of 8 pairs, split while the pairs fit the workspace (≤ 1024), unsplit past.
TEST(SparseAttention, LongAppends) {
  for (DType dt : {DType::kBFloat16, DType::kFloat32}) {
    run_and_check(Batch(dt, 4, 128, {{3000, 64}, {0, 64}, {1, 200}, {700, 300}, {2500, 300}}, 7));
  }
}

// Plans that do not fit the items are still exact: planned for 1 key and 1 row (no split, one
// tile: blocks loop over tiles), forced to the most splits over one tile of 1 pair, and tiles of
// 8 pairs for a group of 1.
TEST(SparseAttention, AnyPlanIsExact) {
  const Batch b(DType::kFloat16, 3, 64, {{5000, 9}, {1, 1}, {0, 3}, {130, 40}, {2049, 2}}, 11);
  SparseAttentionShape tiny;
  tiny.n_items = 5;
  tiny.max_n = 1;
  tiny.total_n = 1;
  const SparseAttentionPlan small = plan_sparse_attention(tiny, 3, sm_count());
  run_and_check(b, &small);
  const SparseAttentionPlan most{1, 1, kMaxSparseSplits, kMaxSparseSplitPairs};
  run_and_check(b, &most);
  const SparseAttentionPlan some{8, 2, 5, 30};  // items with ≤ 30 pairs split, the rest not
  run_and_check(b, &some);
  const Batch g1(DType::kBFloat16, 1, 128, ragged(1), 12);
  const SparseAttentionPlan wide{8, 1, 3, 8};
  run_and_check(g1, &wide);
}

// One block over 20000 keys: many sub-chunks, and with keys drifting towards the queries the
// running max rises in every one (the carried output is rescaled each time).
TEST(SparseAttention, LongUnsplitItemsCarryTheRunningMax) {
  for (bool rising : {false, true}) {
    for (int32_t group : {1, 4, 8}) {
      const Batch b(DType::kBFloat16, group, 256, {{20000, 1}, {9000, 3}}, 13, 0, rising);
      const SparseAttentionPlan one_block{group <= 1 ? 1 : 8, 1, 1, 0};
      run_and_check(b, &one_block);
      run_and_check(b);  // and split by the default plan
    }
  }
}

// Keys in segments, as context caches hold them: sub-chunks and split chunks that reach a
// segment's end go on in the next segment, with the default plan, one block per item (many
// sub-chunks over many segments) and the most splits; decode and appends.
TEST(SparseAttention, SegmentedKeysAndValues) {
  for (DType dt : {DType::kBFloat16, DType::kFloat32}) {
    for (int32_t rows : {1, 5}) {
      std::vector<ItemSpec> specs = ragged(rows);
      specs.push_back({20000, rows});
      const Batch b(dt, 4, 128, specs, 29 + rows);
      const SparseAttentionPlan one_block{8, 1, 1, 0};
      const SparseAttentionPlan most{1, 1, kMaxSparseSplits, kMaxSparseSplitPairs};
      for (int64_t segment_rows : {int64_t{64}, int64_t{100}, int64_t{512}}) {
        run_and_check(b, nullptr, segment_rows);
        run_and_check(b, &one_block, segment_rows);
        run_and_check(b, &most, segment_rows);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Segments past the first one element off 16-byte alignment, the first aligned: each segment's
// rows are loaded as its own alignment allows (16-byte loads from an unaligned address fault).
TEST(SparseAttention, SegmentsUnalignedPastTheFirst) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    const Batch b(dt, 4, 128, {{3, 1}, {700, 1}, {5000, 2}}, 41);
    const SparseAttentionPlan one_block{8, 1, 1, 0};
    run_and_check(b, nullptr, 64, true);
    run_and_check(b, &one_block, 64, true);
    if (HasFatalFailure()) return;
  }
}

// K and V one element off 16-byte alignment: the element-wise load path.
TEST(SparseAttention, UnalignedKeysAndValues) {
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    run_and_check(Batch(dt, 2, 40, ragged(2), 17, 1));
  }
}

// Items, K, V and q in pinned host memory mapped into the device (zero copy), as FlashH2D's
// source or a host function's items would be.
TEST(SparseAttention, MappedHostMemory) {
  const Batch b(DType::kBFloat16, 4, 128, ragged(1), 19);
  auto mapped = [](std::size_t bytes) {
    void* p = nullptr;
    return cudaHostAlloc(&p, std::max<std::size_t>(bytes, 16), cudaHostAllocMapped) == cudaSuccess ? p : nullptr;
  };
  auto* hk = static_cast<std::byte*>(mapped(b.k.size()));
  auto* hv = static_cast<std::byte*>(mapped(b.v.size()));
  auto* hq = static_cast<std::byte*>(mapped(b.q.size()));
  auto* hitems = static_cast<SparseAttentionItem*>(mapped(b.specs.size() * sizeof(SparseAttentionItem)));
  ASSERT_TRUE(hk && hv && hq && hitems);
  std::memcpy(hk, b.k.data(), b.k.size());
  std::memcpy(hv, b.v.data(), b.v.size());
  std::memcpy(hq, b.q.data(), b.q.size());
  DevBuf<float> d_o(b.o_elems), d_lse(b.lse_elems);
  std::vector<float> o(b.o_elems, std::nanf("")), lse(b.lse_elems, std::nanf(""));
  CUDA_OK(cudaMemcpy(d_o.p, o.data(), o.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_lse.p, lse.data(), lse.size() * 4, cudaMemcpyHostToDevice));
  const auto items = b.items(hk, hv, hq, d_o.p, d_lse.p);
  std::copy(items.begin(), items.end(), hitems);
  SparseAttentionParams p;
  p.dtype = b.dtype;
  p.group = b.group;
  p.head_dim = b.d;
  p.sm_scale = b.sm_scale;
  p.items = hitems;
  p.n_items = static_cast<int32_t>(items.size());
  p.plan = plan_sparse_attention(b.shape(), b.group, sm_count());
  p.workspace_bytes = sparse_attention_workspace_bytes(p.plan, p.n_items, p.head_dim);
  DevBuf<std::byte> ws(p.workspace_bytes);
  p.workspace = ws.p;
  CUDA_OK(static_cast<cudaError_t>(launch_sparse_attention(p, nullptr)));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(o.data(), d_o.p, o.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(lse.data(), d_lse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
  for (void* x : {static_cast<void*>(hk), static_cast<void*>(hv), static_cast<void*>(hq), static_cast<void*>(hitems)})
    cudaFreeHost(x);
  expect_correct(b, o, lse, "mapped host memory");
}

// The launch reads its items when it runs: a graph captured once, replayed after the items were
// rewritten (other lengths, the same plan), attends the new items.
TEST(SparseAttention, GraphReplayReadsRewrittenItems) {
  const Batch b(DType::kFloat16, 2, 64, {{4000, 1}, {2500, 1}, {7, 1}, {0, 1}}, 23);
  DevBuf<std::byte> dk(b.k.size()), dv(b.v.size()), dq(b.q.size());
  DevBuf<float> d_o(b.o_elems), d_lse(b.lse_elems);
  DevBuf<SparseAttentionItem> d_items(b.specs.size());
  CUDA_OK(cudaMemcpy(dk.p, b.k.data(), b.k.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dv.p, b.v.data(), b.v.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dq.p, b.q.data(), b.q.size(), cudaMemcpyHostToDevice));
  const auto items = b.items(dk.p, dv.p, dq.p, d_o.p, d_lse.p);
  // Planned for the bounds (the longest set), as a runtime would before it knows the items.
  SparseAttentionShape bounds = b.shape();
  SparseAttentionParams p;
  p.dtype = b.dtype;
  p.group = b.group;
  p.head_dim = b.d;
  p.sm_scale = b.sm_scale;
  p.items = d_items.p;
  p.n_items = bounds.n_items;
  p.plan = plan_sparse_attention(bounds, b.group, sm_count());
  p.workspace_bytes = sparse_attention_workspace_bytes(p.plan, p.n_items, p.head_dim);
  DevBuf<std::byte> ws(p.workspace_bytes);
  p.workspace = ws.p;

  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const int rc = launch_sparse_attention(p, stream);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(rc, 0) << cudaGetErrorString(static_cast<cudaError_t>(rc));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

  // Replay 1: the items as built. Replay 2: shorter sets (prefixes of the same keys), one emptied.
  Batch shorter = b;
  shorter.specs = {{1000, 1}, {2500, 1}, {0, 1}, {0, 1}};
  for (const Batch* want : {&b, static_cast<const Batch*>(&shorter)}) {
    std::vector<SparseAttentionItem> now = items;
    for (std::size_t i = 0; i < now.size(); ++i) now[i].n = want->specs[i].n;
    std::vector<float> o(b.o_elems, std::nanf("")), lse(b.lse_elems, std::nanf(""));
    CUDA_OK(cudaMemcpy(d_items.p, now.data(), now.size() * sizeof(now[0]), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_o.p, o.data(), o.size() * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_lse.p, lse.data(), lse.size() * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(o.data(), d_o.p, o.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(lse.data(), d_lse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
    if (want == &b) {
      expect_correct(b, o, lse, "graph replay");
    } else {
      // The reference over the shortened sets: the same keys' prefixes, recomputed here.
      std::vector<std::vector<double>> ro, rl;
      for (std::size_t i = 0; i < want->specs.size(); ++i) {
        const int64_t n = want->specs[i].n;
        const auto kd = ref::decode(std::vector<std::byte>(b.k.begin() + b.kv_at[i] * b.es,
                                                           b.k.begin() + (b.kv_at[i] + n * b.d) * b.es), b.dtype);
        const auto vd = ref::decode(std::vector<std::byte>(b.v.begin() + b.kv_at[i] * b.es,
                                                           b.v.begin() + (b.kv_at[i] + n * b.d) * b.es), b.dtype);
        const auto qd = ref::decode(std::vector<std::byte>(b.q.begin() + b.q_at[i] * b.es,
                                                           b.q.begin() + (b.q_at[i] + int64_t{b.group} * b.d) * b.es), b.dtype);
        std::vector<double> oo, ll;
        ref::attention_over_set(qd, 1, b.group, kd, vd, n, b.d, b.sm_scale, oo, ll);
        ro.push_back(std::move(oo));
        rl.push_back(std::move(ll));
      }
      expect_matches(*want, o, lse, ro, rl, "graph replay with rewritten items");
    }
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// Bad arguments are refused before anything runs.
TEST(SparseAttention, LaunchRefusesWhatCheckRefuses) {
  SparseAttentionParams p;
  p.head_dim = 12;
  p.sm_scale = 1.0f;
  EXPECT_EQ(launch_sparse_attention(p, nullptr), static_cast<int>(cudaErrorInvalidValue));
  p.head_dim = 64;
  EXPECT_EQ(launch_sparse_attention(p, nullptr), 0);  // no items: nothing to do
}

}  // namespace
}  // namespace hgca::gpu
