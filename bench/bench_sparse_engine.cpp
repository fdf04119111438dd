// The CPU engine's sparse attention against DRAM: GB/s over the selected K+V bytes (engine_GBps over
// the steps' summed time; engine_GBps_median over the median step's, as the PyTorch peer reports) next to a
// streaming read of the same size on the same arena in the same run (best of 5 before the row:
// ratio_to_dram; and one read between every two steps, each step over the faster read beside it:
// ratio_paired_median/min), per ISA and dtype; load balance
// with per-head selected lengths from 1 % to 30 % (slowest worker's busy time over the mean); append
// (n_rows > 1) against an OpenBLAS sgemm formulation of the same attention; the balance workload
// once more with each context set read as the runtime's context caches hold it, in segments.
//
// Working set: HGCA_BENCH_WS_MB (default 1536) MiB of selected K+V, far above any L3 it runs on (below
// 64, one step's uniform heads with fewer keys: the engine from cache, its compute's ceiling). The
// context caches and the streaming read's buffer are node memory as the runtime's store memory takes
// it (cpu::node_alloc: node 0, transparent huge pages advised).
// Shape: Hkv = 8 KV heads, G = 4 (Llama-3-8B-like), D = 128, 16384 selected keys per head (uniform)
// or 1–30 % of 65536 (balance); the batch is sized to the working set.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "cpu/attention_host.hpp"
#include "cpu/pool.hpp"
#include "cpu/sparse_engine.hpp"
#include "dtype.hpp"
#include "hgca/dtype.hpp"
#include "kvmgr/store.hpp"
#include "scatter_block.hpp"

namespace {

using hgca::DType;
using hgca::cpu::SparseEngine;
using hgca::cpu::SparseEngineConfig;
using hgca::cpu::SparseEngineStats;
using hgca::cpu::SparseIsa;
using hgca::cpu::SparseItem;

constexpr int32_t kKvHeads = 8, kGroup = 4, kHeadDim = 128;
constexpr int64_t kUniformSelected = 16384;
constexpr int64_t kBalanceContext = 65536;

int64_t working_set_bytes() {
  const char* e = std::getenv("HGCA_BENCH_WS_MB");
  return (e ? std::atoll(e) : 1536) << 20;
}

int all_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

const hgca::cpu::Topology& topology() {
  static const std::shared_ptr<const hgca::cpu::Topology> topo = [] {
    std::shared_ptr<const hgca::cpu::Topology> t;
    if (!hgca::cpu::Topology::from_machine(&t).is_ok()) std::abort();
    return t;
  }();
  return *topo;
}

/// `count` elements of node 0's memory, as the runtime's store memory allocates it.
template <class T>
struct NodeArray {
  T* data = nullptr;
  size_t bytes = 0;
  explicit NodeArray(size_t count) : bytes(std::max<size_t>(count, 1) * sizeof(T)) {
    data = static_cast<T*>(hgca::cpu::node_alloc(topology(), 0, bytes));
    if (!data) std::abort();
  }
  ~NodeArray() { hgca::cpu::node_free(data, bytes); }
  NodeArray(const NodeArray&) = delete;
  NodeArray& operator=(const NodeArray&) = delete;
};

/// A step's context caches (each (sequence, KV head)'s K rows, then its V rows, one after the other
/// in one allocation, as the runtime carves them from store chunks, all on huge pages: with one
/// allocation each, the 2 MiB-unaligned ends of varied lengths stayed on 4 KiB pages, and 10000-key
/// heads ran at 23.7 against 28.3 GB/s on the dev VM, bench/results/session42), queries and outputs.
struct Workload {
  DType dtype;
  int32_t n_rows;
  std::unique_ptr<NodeArray<uint16_t>> kv;
  std::vector<uint16_t> q;
  std::vector<float> o, lse;
  std::vector<SparseItem> items;
  int64_t kv_bytes = 0;

  Workload(DType dt, const std::vector<int64_t>& lengths, int32_t rows, uint64_t seed) : dtype(dt), n_rows(rows) {
    const size_t heads = lengths.size();
    const int64_t qrow = static_cast<int64_t>(kGroup) * kHeadDim;
    q.resize(heads * rows * qrow);
    o.resize(heads * rows * qrow);
    lse.resize(heads * rows * kGroup);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist;
    auto enc = [&](float x) { return dt == DType::kBFloat16 ? hgca::float_to_bf16(x) : hgca::float_to_fp16(x); };
    // A table of encoded normals, copied in, keeps setup fast for gigabytes (never zeros).
    std::vector<uint16_t> table(1 << 16);
    for (auto& t : table) t = enc(dist(rng));
    for (auto& x : q) x = enc(dist(rng));
    kv = std::make_unique<NodeArray<uint16_t>>(2 * kHeadDim * std::accumulate(lengths.begin(), lengths.end(), size_t{0}));
    uint16_t* at = kv->data;
    for (size_t h = 0; h < heads; ++h) {
      const int64_t elems = lengths[h] * kHeadDim;
      uint16_t* k = at;
      uint16_t* v = at + elems;
      at += 2 * elems;
      for (int64_t i = 0; i < elems; i += 4096) {
        const int64_t n = std::min<int64_t>(4096, elems - i);
        const size_t off = rng() % (table.size() - 4096);
        std::memcpy(k + i, table.data() + off, n * 2);
        std::memcpy(v + i, table.data() + (off + 777) % (table.size() - 4096), n * 2);
      }
      kv_bytes += 2 * elems * 2;
      SparseItem it;
      it.k = k;
      it.v = v;
      it.n = lengths[h];
      it.q = q.data() + h * rows * qrow;
      it.q_row_stride = qrow;
      it.n_rows = rows;
      it.o = o.data() + h * rows * qrow;
      it.o_row_stride = qrow;
      it.lse = lse.data() + h * rows * kGroup;
      it.lse_row_stride = kGroup;
      items.push_back(it);
    }
  }
};

std::vector<int64_t> uniform_lengths() {
  const int64_t per_head = kUniformSelected * kHeadDim * 2 * 2;
  if (working_set_bytes() < per_head * kKvHeads)  // cache-resident runs: fewer keys per head
    return std::vector<int64_t>(kKvHeads, std::max<int64_t>(64, working_set_bytes() / (kKvHeads * kHeadDim * 2 * 2)));
  const int64_t batch = working_set_bytes() / (per_head * kKvHeads);
  return std::vector<int64_t>(static_cast<size_t>(batch * kKvHeads), kUniformSelected);
}

/// Per-head selected lengths uniform in [1 %, 30 %] of the context (HGCA's reported range).
std::vector<int64_t> varied_lengths() {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> frac(0.01, 0.30);
  std::vector<int64_t> out;
  int64_t bytes = 0;
  while (bytes < working_set_bytes() || out.size() % kKvHeads != 0) {
    out.push_back(static_cast<int64_t>(frac(rng) * kBalanceContext));
    bytes += out.back() * kHeadDim * 4;
  }
  return out;
}

/// This process's CPU time (all threads), in seconds.
double process_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// GB/s by the wall clock, and by the process's CPU time × threads: what the threads reach while they
/// hold a core (idle workers spinning count against it). On a machine shared with other work the
/// second is readable where the wall clock is not, but it overstates the streaming read: a thread
/// time-sliced with compute-bound work has the memory to itself, and the threads reading at once may
/// reach much less than the thread count times that. core_share (CPU time / (threads × wall time))
/// says whether the threads ran together; near 1, the wall columns are the ones to read.
struct Rate {
  double wall = 0.0;
  double cpu = 0.0;
  double core_share = 0.0;  // of the best wall-clock rep: CPU time / (threads × wall time)
};

/// XOR of the words [p, p + n) (n a multiple of 16), the plain way: what the compiler makes of
/// it without target flags (16-byte loads, no prefetch).
uint64_t read_plain(const uint64_t* p, size_t n) {
  uint64_t acc[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
#pragma omp simd
    for (int j = 0; j < 8; ++j) acc[j] ^= p[i + j];
  }
  uint64_t s = 0;
  for (uint64_t a : acc) s ^= a;
  return s;
}

/// The same with 64-byte loads and a software prefetch `ahead` bytes on, as the engine reads (it
/// prefetches its next block): on the GPU machine's Xeon the plain read ran slower than the engine
/// (ratio_to_dram 1.08-1.19, session 45), so it was no ceiling there.
__attribute__((target("avx512f"))) uint64_t read_avx512(const uint64_t* p, size_t n, size_t ahead) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0;
  const auto* c = reinterpret_cast<const char*>(p);
  for (size_t i = 0; i + 16 <= n; i += 16) {
    _mm_prefetch(c + i * 8 + ahead, _MM_HINT_T0);
    _mm_prefetch(c + i * 8 + ahead + 64, _MM_HINT_T0);
    a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(p + i + 8));
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_xor_si512(a0, a1));
  uint64_t s = 0;
  for (uint64_t l : lanes) s ^= l;
  return s;
}

/// Streaming read of `bytes` with `arena`'s threads: the DRAM read bandwidth the engine can reach.
/// Best of `reps` (each of wall and CPU time), in GB/s, each rep the fastest of the plain read and,
/// where the CPU has AVX-512, 64-byte loads prefetching 1 or 4 KiB ahead.
Rate dram_read_gbps(tbb::task_arena& arena, int64_t bytes, int reps = 5) {
  static std::unique_ptr<NodeArray<uint64_t>> mem;
  const size_t words = static_cast<size_t>(bytes / 8);
  if (!mem || mem->bytes != words * 8) {
    mem.reset();
    mem = std::make_unique<NodeArray<uint64_t>>(words);
    std::mt19937_64 rng(3);
    for (size_t i = 0; i < words; ++i) mem->data[i] = rng();
  }
  const uint64_t* buf = mem->data;
  const int variants = __builtin_cpu_supports("avx512f") ? 3 : 1;
  Rate best;
  for (int r = 0; r < reps * variants; ++r) {
    const int variant = r % variants;
    std::atomic<uint64_t> sink{0};
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, words, 1 << 16), [&](const tbb::blocked_range<size_t>& rg) {
        const uint64_t* p = buf + rg.begin();
        const size_t n = rg.size() / 16 * 16;
        const uint64_t s = variant == 0 ? read_plain(p, n) : read_avx512(p, n, variant == 1 ? 1024 : 4096);
        sink.fetch_xor(s, std::memory_order_relaxed);
      });
    });
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - c0;
    benchmark::DoNotOptimize(sink.load());
    if (static_cast<double>(words * 8) / sec / 1e9 > best.wall) {
      best.wall = static_cast<double>(words * 8) / sec / 1e9;
      best.core_share = cpu / (sec * arena.max_concurrency());
    }
    best.cpu = std::max(best.cpu, static_cast<double>(words * 8) * arena.max_concurrency() / cpu / 1e9);
  }
  return best;
}

/// The slowest worker's busy time over the mean (0 when nothing was busy).
double max_over_mean(const std::vector<double>& busy) {
  const double sum = std::accumulate(busy.begin(), busy.end(), 0.0);
  return sum > 0.0 ? *std::max_element(busy.begin(), busy.end()) * static_cast<double>(busy.size()) / sum : 0.0;
}

void report(benchmark::State& state, const Workload& w, double seconds, double cpu_seconds, int threads, Rate dram,
            const SparseEngineStats& st) {
  const double bytes = static_cast<double>(w.kv_bytes) * static_cast<double>(state.iterations());
  const double gbps = bytes / seconds / 1e9, gbps_cpu = bytes * threads / cpu_seconds / 1e9;
  state.counters["engine_GBps"] = gbps;
  state.counters["dram_read_GBps"] = dram.wall;
  state.counters["ratio_to_dram"] = gbps / dram.wall;
  state.counters["engine_GBps_cpu"] = gbps_cpu;
  state.counters["dram_read_GBps_cpu"] = dram.cpu;
  state.counters["ratio_to_dram_cpu"] = gbps_cpu / dram.cpu;
  state.counters["engine_core_share"] = cpu_seconds / (seconds * threads);
  state.counters["dram_core_share"] = dram.core_share;
  state.counters["kv_MB"] = static_cast<double>(w.kv_bytes) / 1e6;
  state.counters["tasks"] = static_cast<double>(st.tasks);
  state.counters["split_tokens"] = static_cast<double>(st.kv_split_tokens);
  if (!st.busy_seconds.empty()) state.counters["busy_max_over_mean"] = max_over_mean(st.busy_seconds);
  state.SetBytesProcessed(w.kv_bytes * state.iterations());
}

/// Each item's K and V read in segments as a context cache lays them out (the first of
/// StoreMemoryOptions' default size, 64 rows here, or HGCA_BENCH_FIRST_SEGMENT_KB), over the same
/// memory: what changes is only how the engine cuts and merges the runs. Returns the segment tables
/// the items point into.
std::vector<std::vector<hgca::kvmgr::KvSegment>> segment_items(Workload& w) {
  const int64_t rows = hgca::kvmgr::ContextCache::segment_rows_for(kHeadDim * sizeof(uint16_t),
                                                                   hgca::bench::first_segment_bytes());
  std::vector<std::vector<hgca::kvmgr::KvSegment>> tables(w.items.size());
  for (size_t i = 0; i < w.items.size(); ++i) {
    SparseItem& it = w.items[i];
    for (int32_t s = 0; hgca::kvmgr::context_segment_first(s, rows) < it.n; ++s) {
      const int64_t at = hgca::kvmgr::context_segment_first(s, rows) * kHeadDim;
      tables[i].push_back({static_cast<const uint16_t*>(it.k) + at, static_cast<const uint16_t*>(it.v) + at});
    }
    it.segments = tables[i].data();
    it.segment_rows = rows;
  }
  return tables;
}

/// The engine over a step with `lengths` (in segments when `segmented`); args: threads, ISA, dtype.
void run_engine(benchmark::State& state, const std::vector<int64_t>& lengths, int32_t rows, bool segmented = false) {
  const int threads = state.range(0) > 0 ? static_cast<int>(state.range(0)) : all_threads();
  const auto isa = static_cast<SparseIsa>(state.range(1));
  const auto dtype = static_cast<DType>(state.range(2));
  if (!hgca::cpu::isa_supported(isa)) {
    state.SkipWithError("ISA path not supported by this CPU");
    return;
  }
  tbb::task_arena arena(threads);
  Workload w(dtype, lengths, rows, 7);
  const auto tables = segmented ? segment_items(w) : std::vector<std::vector<hgca::kvmgr::KvSegment>>{};
  const SparseEngine engine(SparseEngineConfig{isa, 0, 0});
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  const Rate dram = dram_read_gbps(arena, w.kv_bytes);
  if (!engine.attend(dtype, kGroup, kHeadDim, scale, w.items, arena).is_ok()) {  // warm-up
    state.SkipWithError("attend failed");
    return;
  }
  SparseEngineStats st;
  double seconds = 0.0, cpu_seconds = 0.0;
  // Each step is paired with the read just before and just after it (one rep each, outside the
  // step's time): on a host whose bandwidth moves between states (the dev VM's read ran 35 or
  // 60 GB/s from one second to the next), the ratio to a read taken once before the row compares
  // two states. A pair's ratio is over the faster of its two reads.
  std::vector<double> paired;
  // The slowest worker's busy time over the mean, per step (busy_max_over_mean sums the steps
  // first, which averages one step's imbalance with the next's).
  std::vector<double> balance;
  std::vector<double> busy_before, step_busy;
  std::vector<double> step_seconds;  // engine_GBps is over their sum; engine_GBps_median, the peers' statistic
  double read_before = dram_read_gbps(arena, w.kv_bytes, 1).wall;
  for (auto _ : state) {
    busy_before = st.busy_seconds;
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(engine.attend(dtype, kGroup, kHeadDim, scale, w.items, arena, &st).is_ok());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    busy_before.resize(st.busy_seconds.size(), 0.0);
    step_busy.resize(st.busy_seconds.size());
    for (size_t i = 0; i < step_busy.size(); ++i) step_busy[i] = st.busy_seconds[i] - busy_before[i];
    if (const double r = max_over_mean(step_busy); r > 0.0) balance.push_back(r);
    cpu_seconds += process_cpu_seconds() - c0;
    state.SetIterationTime(s);
    seconds += s;
    step_seconds.push_back(s);
    const double read_after = dram_read_gbps(arena, w.kv_bytes, 1).wall;
    paired.push_back(static_cast<double>(w.kv_bytes) / s / 1e9 / std::max(read_before, read_after));
    read_before = read_after;
  }
  report(state, w, seconds, cpu_seconds, threads, dram, st);
  std::sort(step_seconds.begin(), step_seconds.end());
  state.counters["engine_GBps_median"] = static_cast<double>(w.kv_bytes) / step_seconds[step_seconds.size() / 2] / 1e9;
  std::sort(paired.begin(), paired.end());
  state.counters["ratio_paired_median"] = paired[paired.size() / 2];
  state.counters["ratio_paired_min"] = paired.front();
  if (!balance.empty()) {
    std::sort(balance.begin(), balance.end());
    state.counters["busy_max_over_mean_step_median"] = balance[balance.size() / 2];
    state.counters["busy_max_over_mean_step_worst"] = balance.back();
  }
  state.SetLabel(std::string(hgca::cpu::to_string(engine.isa())) + " " + hgca::to_string(dtype) + " threads=" + std::to_string(threads));
}

void BM_Decode(benchmark::State& state) { run_engine(state, uniform_lengths(), 1); }
void BM_DecodeVaried(benchmark::State& state) { run_engine(state, varied_lengths(), 1); }
void BM_DecodeVariedSegmented(benchmark::State& state) { run_engine(state, varied_lengths(), 1, true); }

void decode_args(benchmark::internal::Benchmark* b) {
  for (auto dt : {DType::kBFloat16, DType::kFloat16}) {
    for (auto isa : {SparseIsa::kAvx512Bf16, SparseIsa::kAvx512, SparseIsa::kAvx2}) {
      for (int threads : {1, 0}) b->Args({threads, static_cast<int64_t>(isa), static_cast<int64_t>(dt)});
    }
  }
  b->ArgNames({"threads", "isa", "dtype"})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}
BENCHMARK(BM_Decode)->Apply(decode_args);
void varied_args(benchmark::internal::Benchmark* b) {
  b->Args({0, static_cast<int64_t>(SparseIsa::kAuto), static_cast<int64_t>(DType::kBFloat16)})
      ->Args({0, static_cast<int64_t>(SparseIsa::kAuto), static_cast<int64_t>(DType::kFloat16)})
      ->ArgNames({"threads", "isa", "dtype"})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}
BENCHMARK(BM_DecodeVaried)->Apply(varied_args);
BENCHMARK(BM_DecodeVariedSegmented)->Apply(varied_args);

// --- append (n_rows > 1): the engine's own tiling against OpenBLAS sgemm over fp32 tiles ---

constexpr int32_t kAppendRows = 16;
constexpr int64_t kAppendSelected = 4096;
constexpr int64_t kAppendHeads = 64;

/// The same attention through sgemm: per item and tile of 256 keys, convert K, V to fp32, S = Q Kᵀ,
/// online softmax, O += P V. Items in parallel on the arena.
void blas_append(const Workload& w, float scale, tbb::task_arena& arena) {
  constexpr int64_t kTile = 256;
  const int32_t rows = w.n_rows * kGroup, d = kHeadDim;
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, w.items.size(), [&](size_t i) {
      const SparseItem& it = w.items[i];
      std::vector<float> q(rows * d), k(kTile * d), v(kTile * d), s(rows * kTile), o(rows * d, 0.0f), m(rows, -INFINITY), l(rows, 0.0f);
      const auto* qi = static_cast<const uint16_t*>(it.q);
      auto cvt = [&](uint16_t x) { return w.dtype == DType::kBFloat16 ? hgca::bf16_to_float(x) : hgca::fp16_to_float(x); };
      for (int32_t r = 0; r < rows; ++r)
        for (int32_t e = 0; e < d; ++e) q[r * d + e] = cvt(qi[r * d + e]) * scale;
      for (int64_t t0 = 0; t0 < it.n; t0 += kTile) {
        const int64_t nt = std::min(kTile, it.n - t0);
        const auto* ks = static_cast<const uint16_t*>(it.k) + t0 * d;
        const auto* vs = static_cast<const uint16_t*>(it.v) + t0 * d;
        for (int64_t e = 0; e < nt * d; ++e) k[e] = cvt(ks[e]), v[e] = cvt(vs[e]);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, static_cast<int>(nt), d, 1.0f, q.data(), d,
                    k.data(), d, 0.0f, s.data(), static_cast<int>(kTile));
        for (int32_t r = 0; r < rows; ++r) {
          float* sr = s.data() + r * kTile;
          const float mx = std::max(m[r], *std::max_element(sr, sr + nt));
          const float a = std::exp(m[r] - mx);
          float sum = 0.0f;
          for (int64_t t = 0; t < nt; ++t) sum += (sr[t] = std::exp(sr[t] - mx));
          l[r] = l[r] * a + sum;
          m[r] = mx;
          for (int32_t e = 0; e < d; ++e) o[r * d + e] *= a;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, static_cast<int>(nt), 1.0f, s.data(),
                    static_cast<int>(kTile), v.data(), d, 1.0f, o.data(), d);
      }
      for (int32_t r = 0; r < rows; ++r) {
        for (int32_t e = 0; e < d; ++e) it.o[r * d + e] = o[r * d + e] / l[r];
        it.lse[r] = m[r] + std::log(l[r]);
      }
    });
  });
}

/// args: threads, path (0: engine, 1: OpenBLAS).
void BM_Append(benchmark::State& state) {
  const int threads = state.range(0) > 0 ? static_cast<int>(state.range(0)) : all_threads();
  tbb::task_arena arena(threads);
  openblas_set_num_threads(1);  // parallel over items on the arena, like the engine
  Workload w(DType::kBFloat16, std::vector<int64_t>(kAppendHeads, kAppendSelected), kAppendRows, 9);
  const SparseEngine engine;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (state.range(1) == 0) {
      benchmark::DoNotOptimize(engine.attend(w.dtype, kGroup, kHeadDim, scale, w.items, arena).is_ok());
    } else {
      blas_append(w, scale, arena);
    }
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double flops = 4.0 * kAppendRows * kGroup * kHeadDim * static_cast<double>(kAppendSelected * kAppendHeads);
  state.counters["GFLOPs"] = benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(state.range(1) == 0 ? "engine tiling" : "openblas sgemm");
}
BENCHMARK(BM_Append)->Args({0, 0})->Args({0, 1})->ArgNames({"threads", "blas"})->UseManualTime()->Unit(benchmark::kMillisecond);

// --- a re-evaluation (HGCA Algorithm 1, line 20): the appended queries' weights over the store ---

/// The peer: the naive fp32 host attention re-evaluations ran on up to bcb66ba (cpu::attend_group
/// then: a scalar dot and axpy per key, the outputs formed too), kept here as it was.
void naive_attend_group(const hgca::cpu::GroupAttentionParams<hgca::detail::bf16_t>& p) {
  int64_t n_keys = 0;
  for (const auto& seg : p.segments) n_keys += seg.n;
  const int32_t d = p.head_dim;
  std::vector<float> q(static_cast<size_t>(d)), scores(static_cast<size_t>(n_keys));
  std::vector<float> acc(static_cast<size_t>(p.group * n_keys), 0.0f);
  for (int32_t r = 0; r < p.n_rows; ++r) {
    for (int32_t g = 0; g < p.group; ++g) {
      const auto* qg = p.q + r * p.q_row_stride + static_cast<int64_t>(g) * d;
      for (int32_t i = 0; i < d; ++i) q[i] = hgca::detail::to_float(qg[i]) * p.sm_scale;
      float* o = p.o + r * p.o_row_stride + static_cast<int64_t>(g) * d;
      std::fill(o, o + d, 0.0f);
      float m = -INFINITY;
      int64_t j = 0;
      for (const auto& seg : p.segments) {
        for (int64_t t = 0; t < seg.n; ++t, ++j) {
          const auto* k = seg.k + t * seg.stride;
          float s = 0.0f;
#pragma omp simd reduction(+ : s)
          for (int32_t i = 0; i < d; ++i) s += q[i] * hgca::detail::to_float(k[i]);
          scores[j] = s;
          m = std::max(m, s);
        }
      }
      float sum = 0.0f;
      for (int64_t t = 0; t < n_keys; ++t) sum += (scores[t] = std::exp(scores[t] - m));
      const float inv = 1.0f / sum;
      j = 0;
      for (const auto& seg : p.segments) {
        for (int64_t t = 0; t < seg.n; ++t, ++j) {
          const auto* v = seg.v + t * seg.stride;
          const float a = scores[j] * inv;
#pragma omp simd
          for (int32_t i = 0; i < d; ++i) o[i] += a * hgca::detail::to_float(v[i]);
        }
      }
      p.lse[r * p.lse_row_stride + g] = m + std::log(sum);
      for (int64_t t = 0; t < n_keys; ++t) acc[g * n_keys + t] += scores[t] * inv;
    }
  }
  for (int64_t t = 0; t < n_keys; ++t) {
    float best = acc[t];
    for (int32_t g = 1; g < p.group; ++g) best = std::max(best, acc[g * n_keys + t]);
    p.weights[t] = best / static_cast<float>(p.n_rows);
  }
}

constexpr int32_t kReevalRows = 512;   // one prefill chunk
constexpr int32_t kReevalChunkRows = 64;

/// args: path (0: the engine's weights kernel, as run_reevaluation runs it: (KV head, 64-row chunk)
/// tasks; 1: naive_attend_group, which re-evaluations ran on before, a task per KV head); store
/// entries per KV head (4096: K in L2; 32768: the kernel's score rows past L2). bf16, Hkv 8, G 4,
/// D 128, all threads; K in 64-row blocks like a store's.
void BM_Reevaluation(benchmark::State& state) {
  const int64_t keys = state.range(1);
  tbb::task_arena arena(all_threads());
  const int32_t hq = kKvHeads * kGroup;
  std::mt19937_64 rng(4);
  std::normal_distribution<float> dist;
  std::vector<uint16_t> k(static_cast<size_t>(kKvHeads) * keys * kHeadDim), q(static_cast<size_t>(kReevalRows) * hq * kHeadDim);
  for (auto& x : k) x = hgca::float_to_bf16(dist(rng));
  for (auto& x : q) x = hgca::float_to_bf16(dist(rng));
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  constexpr int32_t kChunks = kReevalRows / kReevalChunkRows;
  std::vector<float> acc(static_cast<size_t>(kKvHeads) * kChunks * kGroup * keys);
  std::vector<float> naive_w(static_cast<size_t>(kKvHeads) * keys);
  auto head_k = [&](int32_t h) { return reinterpret_cast<const hgca::detail::bf16_t*>(k.data()) + int64_t{h} * keys * kHeadDim; };
  auto engine = [&] {
    tbb::parallel_for(0, kKvHeads * kChunks, [&](int32_t task) {
      const int32_t h = task / kChunks, r0 = task % kChunks * kReevalChunkRows;
      std::vector<hgca::cpu::arch::KvRun> runs;
      for (int64_t t = 0; t < keys; t += 64) runs.push_back({head_k(h) + t * kHeadDim, nullptr, 64});
      std::vector<float> work(static_cast<size_t>(hgca::cpu::arch::weights_work_floats(kReevalChunkRows, kGroup, kHeadDim, keys)));
      float* a = acc.data() + static_cast<size_t>(task) * kGroup * keys;
      std::fill(a, a + kGroup * keys, 0.0f);
      hgca::cpu::arch::WeightsParams p;
      p.n = keys;
      p.runs = runs.data();
      p.n_runs = static_cast<int32_t>(runs.size());
      p.q = q.data() + (int64_t{r0} * hq + int64_t{h} * kGroup) * kHeadDim;
      p.q_row_stride = int64_t{hq} * kHeadDim;
      p.n_rows = kReevalChunkRows;
      p.group = kGroup;
      p.head_dim = kHeadDim;
      p.sm_scale = scale;
      p.acc = a;
      p.work = work.data();
      hgca::cpu::add_key_weights(SparseIsa::kAuto, DType::kBFloat16, p);
    });
  };
  auto naive = [&] {
    tbb::parallel_for(0, kKvHeads, [&](int32_t h) {
      std::vector<hgca::cpu::KvSegment<hgca::detail::bf16_t>> segments;
      for (int64_t t = 0; t < keys; t += 64) segments.push_back({head_k(h) + t * kHeadDim, head_k(h) + t * kHeadDim, 64, kHeadDim});
      std::vector<float> o(static_cast<size_t>(kReevalRows) * kGroup * kHeadDim), lse(static_cast<size_t>(kReevalRows) * kGroup);
      hgca::cpu::GroupAttentionParams<hgca::detail::bf16_t> p;
      p.q = reinterpret_cast<const hgca::detail::bf16_t*>(q.data()) + int64_t{h} * kGroup * kHeadDim;
      p.q_row_stride = int64_t{hq} * kHeadDim;
      p.n_rows = kReevalRows;
      p.group = kGroup;
      p.head_dim = kHeadDim;
      p.sm_scale = scale;
      p.segments = segments;
      p.o = o.data();
      p.o_row_stride = int64_t{kGroup} * kHeadDim;
      p.lse = lse.data();
      p.lse_row_stride = kGroup;
      p.weights = naive_w.data() + int64_t{h} * keys;
      naive_attend_group(p);
    });
  };
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    arena.execute([&] { state.range(0) == 0 ? engine() : naive(); });
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double scores = static_cast<double>(kReevalRows) * hq * static_cast<double>(keys);
  state.counters["Gscores_per_s"] = benchmark::Counter(scores * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.counters["threads"] = arena.max_concurrency();
  state.SetLabel(state.range(0) == 0 ? "engine weights kernel" : "naive host attention (before)");
}
BENCHMARK(BM_Reevaluation)->ArgsProduct({{0, 1}, {4096, 32768}})->ArgNames({"naive", "keys"})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
