// The GPU sparse attention (the overflow policy's GPU side) on gathered context sets: decode steps
// as GB/s of selected K+V read, against a read-only kernel over the same bytes in the same run
// (the HBM roofline; the ratio is reported), and appends as GB/s × rows and TFLOP/s, the units of
// OverflowRates. Shapes: Hkv 8, G 4 (Hq 32), D 128, bf16, 10 % of a 32K or 128K context selected
// per KV head, the items' K/V contiguous one after the other as FlashH2D leaves them. Timed with
// CUDA events over back-to-back calls that rotate among enough buffer sets to exceed the 60 MB L2.
// The external peer is bench/peers/torch_sdpa_sparse.py (PyTorch SDPA over as many keys).
// BM_SparseDecodeHost: the same decode over K/V in mapped pinned host memory, as the CUDA backend's
// overflow policy reads the context caches in place: contiguous, or in segments as the caches hold
// them (kvmgr/context_segments.hpp), with the segment tables in pinned host memory too; the peer is
// the same read over the link.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/sparse_attention.hpp"
#include "gpu_fill.hpp"
#include "hbm_read.hpp"
#include "kvmgr/context_segments.hpp"
#include "scatter_block.hpp"

namespace {

using hgca::bench::fill_random_bf16;
using hgca::gpu::SparseAttentionItem;
namespace kvmgr = hgca::kvmgr;

constexpr int32_t kHkv = 8, kG = 4, kD = 128;
constexpr double kSelected = 0.10;
constexpr std::size_t kMinWorkingSet = 256u << 20;  // > 4 × the H200's 60 MB L2
constexpr int kMaxSets = 64;
constexpr int kIterations = 30;
/// A context cache's first segment at D 128 in bf16 (the library's, or HGCA_BENCH_FIRST_SEGMENT_KB).
const int64_t kSegmentRows = kvmgr::ContextCache::segment_rows_for(kD * 2, hgca::bench::first_segment_bytes());

/// Where a shape's K/V lie: device memory, or mapped pinned host memory (contiguous or in segments).
enum class Placement { kDevice, kHost, kHostSegments };

/// One shape's device buffers, kept across Google Benchmark's invocations of that shape.
struct Fixture {
  int32_t batch = 0, rows = 0;
  Placement where = Placement::kDevice;
  int64_t n = 0;  // selected keys per (sequence, KV head)
  int32_t items = 0;
  std::size_t kv_bytes = 0;  // K + V of one call
  int n_sets = 0;
  std::vector<void*> kv;     // per set: K of every item, then V of every item (or the items' segments)
  std::vector<void*> tables;  // per set, kHostSegments: every item's segment table
  std::vector<void*> q;      // per set: [batch × rows, Hq, D]
  std::vector<SparseAttentionItem*> d_items;  // per set
  float *o = nullptr, *lse = nullptr;
  unsigned* sink = nullptr;
  void* ws = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  hgca::gpu::SparseAttentionParams p;
  cudaError_t error = cudaSuccess;
  std::string failed;

  bool ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess && error == cudaSuccess) {
      error = e;
      failed = what;
    }
    return error == cudaSuccess;
  }

  Fixture(int32_t b, int64_t context, int32_t r, Placement w) : batch(b), rows(r), where(w) {
    n = std::llround(static_cast<double>(context) * kSelected);
    items = batch * kHkv;
    const std::size_t one = static_cast<std::size_t>(items) * n * kD * 2;  // K (or V) of every item
    kv_bytes = 2 * one;
    // In segments, each item's cache holds its segments whole (K then V per segment, a span each).
    const int32_t n_segments = kvmgr::context_segment_of(n - 1, kSegmentRows) + 1;
    const int64_t capacity = kvmgr::context_segment_first(n_segments, kSegmentRows);
    const std::size_t set_bytes =
        where == Placement::kHostSegments ? static_cast<std::size_t>(items) * capacity * kD * 2 * 2 : kv_bytes;
    n_sets = static_cast<int>(std::clamp<std::size_t>((kMinWorkingSet + kv_bytes - 1) / kv_bytes, 1, kMaxSets));
    const std::size_t q_elems = static_cast<std::size_t>(batch) * rows * kHkv * kG * kD;
    int sms = 0, device = 0;
    ok(cudaGetDevice(&device), "device") &&
        ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute") &&
        ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") &&
        ok(cudaEventCreate(&ev0), "event") && ok(cudaEventCreate(&ev1), "event") &&
        ok(cudaMalloc(&o, sizeof(float) * q_elems), "malloc o") &&
        ok(cudaMalloc(&lse, sizeof(float) * q_elems / kD), "malloc lse") &&
        ok(cudaMalloc(&sink, sizeof(unsigned)), "malloc sink");
    p.dtype = hgca::DType::kBFloat16;
    p.group = kG;
    p.head_dim = kD;
    p.sm_scale = 1.0f / std::sqrt(static_cast<float>(kD));
    p.n_items = items;
    p.plan = hgca::gpu::plan_sparse_attention({items, n, n * items, rows}, kG, std::max(sms, 1));
    p.workspace_bytes = hgca::gpu::sparse_attention_workspace_bytes(p.plan, items, kD);
    if (p.workspace_bytes > 0) ok(cudaMalloc(&ws, p.workspace_bytes), "malloc workspace");
    p.workspace = ws;
    for (int s = 0; error == cudaSuccess && s < n_sets; ++s) {
      void *kvs = nullptr, *qs = nullptr;
      SparseAttentionItem* its = nullptr;
      const cudaError_t got = where == Placement::kDevice ? cudaMalloc(&kvs, set_bytes)
                                                          : cudaHostAlloc(&kvs, set_bytes, cudaHostAllocMapped | cudaHostAllocPortable);
      if (!ok(got, "allocate K/V") || !ok(cudaMalloc(&qs, q_elems * 2), "malloc q") ||
          !ok(cudaMalloc(&its, sizeof(SparseAttentionItem) * items), "malloc items"))
        break;
      kv.push_back(kvs);
      q.push_back(qs);
      d_items.push_back(its);
      ok(fill_random_bf16(kvs, set_bytes, 2 * s), "fill K/V") && ok(fill_random_bf16(qs, q_elems * 2, 2 * s + 1), "fill q");
      // Item (sequence i, KV head h): its rows' query heads h·G … of q, its K/V the i·Hkv + h-th set.
      std::vector<SparseAttentionItem> host(items);
      const auto* k = static_cast<const uint16_t*>(kvs);
      const auto* v = k + one / 2;
      const auto* qb = static_cast<const uint16_t*>(qs);
      const int64_t q_row = int64_t{kHkv} * kG * kD;
      for (int32_t i = 0; i < batch; ++i) {
        for (int32_t h = 0; h < kHkv; ++h) {
          const int64_t z = int64_t{i} * kHkv + h;
          const int64_t row0 = int64_t{i} * rows;
          host[z] = {k + z * n * kD, v + z * n * kD, n, qb + row0 * q_row + h * kG * kD, q_row, rows,
                     o + row0 * q_row + h * kG * kD, q_row, lse + row0 * kHkv * kG + h * kG, int64_t{kHkv} * kG};
        }
      }
      if (where == Placement::kHostSegments) {
        void* t = nullptr;
        if (!ok(cudaHostAlloc(&t, sizeof(kvmgr::KvSegment) * kvmgr::kMaxContextSegments * items,
                              cudaHostAllocMapped | cudaHostAllocPortable), "allocate tables"))
          break;
        tables.push_back(t);
        auto* table = static_cast<kvmgr::KvSegment*>(t);
        auto* span = static_cast<uint16_t*>(kvs);
        for (int64_t z = 0; z < items; ++z, table += kvmgr::kMaxContextSegments) {
          for (int32_t sg = 0; sg < n_segments; ++sg) {
            const int64_t seg_rows = kvmgr::context_segment_rows(sg, kSegmentRows);
            table[sg] = {span, span + seg_rows * kD};
            span += 2 * seg_rows * kD;
          }
          host[z].k = table[0].k;
          host[z].v = table[0].v;
          host[z].segments = table;
          host[z].segment_rows = kSegmentRows;
        }
      }
      ok(cudaMemcpy(its, host.data(), sizeof(SparseAttentionItem) * items, cudaMemcpyHostToDevice), "items");
    }
    for (int s = 0; error == cudaSuccess && s < n_sets; ++s) ok(call(s), "warm-up") && ok(read(s), "warm-up read");
    if (error == cudaSuccess) ok(cudaStreamSynchronize(stream), "warm-up sync");
  }

  cudaError_t call(int s) {
    p.items = d_items[s];
    return static_cast<cudaError_t>(hgca::gpu::launch_sparse_attention(p, stream));
  }
  cudaError_t read(int s) {
    return static_cast<cudaError_t>(hgca::bench::launch_hbm_read(kv[s], kv_bytes, sink, stream));
  }

  /// Seconds per call of `f` over `reps` back-to-back calls rotating the sets.
  template <typename F>
  double time(F f, int reps) {
    cudaEventRecord(ev0, stream);
    for (int r = 0; r < reps; ++r) ok(f(r % n_sets), "launch");
    cudaEventRecord(ev1, stream);
    if (!ok(cudaEventSynchronize(ev1), "sync")) return 0.0;
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, ev0, ev1);
    return ms * 1e-3 / reps;
  }

  ~Fixture() {
    for (void* x : kv) where == Placement::kDevice ? cudaFree(x) : cudaFreeHost(x);
    for (void* x : tables) cudaFreeHost(x);
    for (void* x : q) cudaFree(x);
    for (auto* x : d_items) cudaFree(x);
    cudaFree(o);
    cudaFree(lse);
    cudaFree(sink);
    cudaFree(ws);
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    if (stream) cudaStreamDestroy(stream);
  }
};

Fixture& fixture(int32_t batch, int64_t context, int32_t rows, Placement where = Placement::kDevice) {
  static std::unique_ptr<Fixture> fx;
  if (!fx || fx->batch != batch || fx->rows != rows || fx->where != where ||
      fx->n != std::llround(static_cast<double>(context) * kSelected)) {
    fx.reset();  // free the previous shape first
    fx = std::make_unique<Fixture>(batch, context, rows, where);
  }
  return *fx;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void report_plan(benchmark::State& state, const Fixture& f) {
  state.counters["n_per_head"] = static_cast<double>(f.n);
  state.counters["kv_splits"] = f.p.plan.kv_splits;
  state.counters["tile_pairs"] = f.p.plan.tile_pairs;
  state.counters["tiles"] = f.p.plan.tiles;
  state.counters["blocks"] = static_cast<double>(f.items) * f.p.plan.tiles * f.p.plan.kv_splits;
  state.counters["sets"] = f.n_sets;
}

/// Decode: one query row per sequence. Each iteration times the sparse attention and then the
/// read-only peer over the same sets (as many bytes; over the link for host memory); the counters
/// are medians over the iterations.
void decode(benchmark::State& state, Placement where) {
  Fixture& f = fixture(static_cast<int32_t>(state.range(0)), state.range(1), 1, where);
  if (f.error != cudaSuccess) {
    state.SkipWithError((f.failed + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  const int reps = std::max(f.n_sets, 8);
  std::vector<double> attend, read;
  for (auto _ : state) {
    attend.push_back(f.time([&](int s) { return f.call(s); }, reps));
    read.push_back(f.time([&](int s) { return f.read(s); }, reps));
    state.SetIterationTime(attend.back());
  }
  if (f.error != cudaSuccess) {
    state.SkipWithError((f.failed + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  const double t = median(attend), t_read = median(read);
  state.SetBytesProcessed(static_cast<int64_t>(f.kv_bytes) * state.iterations());
  state.counters["us"] = t * 1e6;
  state.counters["kv_GBps"] = static_cast<double>(f.kv_bytes) / t * 1e-9;
  state.counters["read_us"] = t_read * 1e6;
  state.counters["read_GBps"] = static_cast<double>(f.kv_bytes) / t_read * 1e-9;
  state.counters["vs_read"] = t_read / t;  // 1: as fast as only reading the bytes
  report_plan(state, f);
}

void BM_SparseDecode(benchmark::State& state) { decode(state, Placement::kDevice); }
void BM_SparseDecodeHost(benchmark::State& state) {
  decode(state, state.range(2) != 0 ? Placement::kHostSegments : Placement::kHost);
}

// args: batch, context (10 % of it selected per KV head)
BENCHMARK(BM_SparseDecode)
    ->ArgNames({"batch", "context"})
    ->ArgsProduct({{1, 16}, {32768, 131072}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(kIterations);  // each iteration already averages `reps` calls
// args: batch, context, segments (0: each item's K and V contiguous; 1: in a context cache's segments)
BENCHMARK(BM_SparseDecodeHost)
    ->ArgNames({"batch", "context", "segments"})
    ->ArgsProduct({{1, 16}, {32768, 131072}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(10);

/// Appends: `rows` new tokens of one sequence over its 8 heads' context sets. Reported in the cost
/// model's unit (GB/s of K+V times rows) and as attention TFLOP/s (4·D flops per key and query head);
/// kv_MB: the K+V bytes one call reads (once per tile of pairs from host memory, unless cached).
void BM_SparseAppend(benchmark::State& state) {
  const auto rows = static_cast<int32_t>(state.range(0));
  const Placement where = state.range(2) == 0 ? Placement::kDevice : Placement::kHostSegments;
  Fixture& f = fixture(1, state.range(1), rows, where);
  if (f.error != cudaSuccess) {
    state.SkipWithError((f.failed + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  const int reps = std::max(f.n_sets, 4);
  std::vector<double> attend;
  for (auto _ : state) {
    attend.push_back(f.time([&](int s) { return f.call(s); }, reps));
    state.SetIterationTime(attend.back());
  }
  if (f.error != cudaSuccess) {
    state.SkipWithError((f.failed + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  const double t = median(attend);
  state.counters["us"] = t * 1e6;
  state.counters["row_GBps"] = static_cast<double>(f.kv_bytes) * rows / t * 1e-9;
  state.counters["TFLOPs"] = 4.0 * kD * static_cast<double>(f.n) * f.items * rows * kG / t * 1e-12;
  state.counters["kv_MB"] = static_cast<double>(f.kv_bytes) * 1e-6;
  report_plan(state, f);
}

// args: rows (new tokens), context (10 % selected), host (0: K/V in device memory, as after a
// FlashH2D gather; 1: read in place from a context cache's segments in mapped pinned memory, as the
// overflow policy's GPU path reads them)
BENCHMARK(BM_SparseAppend)
    ->ArgNames({"rows", "context", "host"})
    ->ArgsProduct({{16, 128, 512}, {32768}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(10);

}  // namespace

BENCHMARK_MAIN();
