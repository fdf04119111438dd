// Decode over a full GPU window ring: the whole launch_window_attention (attention, LSE and the
// MAW update of every window entry), bf16, D 128, Hq 32, timed with CUDA events over back-to-back
// calls that rotate among enough ring sets for the working set to exceed the 60 MB L2.
// Its peer is bench/peers/torch_sdpa_window.py on the same shapes.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/window_attention.hpp"
#include "gpu_fill.hpp"

namespace {

using hgca::bench::fill_random_bf16;

constexpr int32_t kHq = 32, kD = 128;
constexpr std::size_t kMinWorkingSet = 256u << 20;  // > 4 × the H200's 60 MB L2
constexpr int kMaxSets = 64;

struct Set {
  void *ring_k = nullptr, *ring_v = nullptr, *q = nullptr, *k_new = nullptr, *v_new = nullptr;
  float* maw = nullptr;
};

/// The device buffers of one shape, kept across Google Benchmark's invocations of that shape
/// (allocating and filling gigabytes on every invocation would dominate the run).
struct Fixture {
  int32_t batch = 0, hkv = 0, window = 0;
  std::size_t ring_bytes = 0, kv_bytes = 0, ws_bytes = 0;
  int n_sets = 0;
  hgca::gpu::WindowAttentionPlan plan;
  std::vector<Set> sets;
  std::vector<hgca::gpu::WindowSeq> seqs;
  float *o = nullptr, *lse = nullptr, *obs = nullptr;
  void* ws = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  hgca::gpu::WindowAttentionParams p;
  cudaError_t error = cudaSuccess;
  const char* failed = "";

  bool ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess && error == cudaSuccess) {
      error = e;
      failed = what;
    }
    return error == cudaSuccess;
  }

  Fixture(int32_t b, int32_t h, int32_t w) : batch(b), hkv(h), window(w) {
    const std::size_t kv_row = std::size_t{kD} * 2;
    ring_bytes = std::size_t(batch) * hkv * window * kv_row;  // K (or V)
    kv_bytes = 2 * ring_bytes;  // what one call must read of the windows
    n_sets = static_cast<int>(
        std::clamp<std::size_t>((kMinWorkingSet + kv_bytes - 1) / kv_bytes, 1, kMaxSets));
    seqs.resize(batch);
    for (int32_t i = 0; i < batch; ++i)  // the window full, its oldest entry mid-ring
      seqs[i] = hgca::gpu::WindowSeq{i, int64_t{i} * hkv, 1, window, window / 3 + 1, i};
    p.dtype = hgca::DType::kBFloat16;
    p.n_q_heads = kHq;
    p.n_kv_heads = hkv;
    p.head_dim = kD;
    p.capacity = window;
    p.sm_scale = 1.0f / std::sqrt(float(kD));
    p.alpha = 0.1f;
    p.seqs = seqs.data();
    p.batch = batch;
    ws_bytes = hgca::gpu::window_attention_workspace_bytes(p, batch, window, 1);
    ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") &&
        ok(cudaEventCreate(&ev0), "event") && ok(cudaEventCreate(&ev1), "event") &&
        ok(cudaMalloc(&o, sizeof(float) * batch * kHq * kD), "malloc") &&
        ok(cudaMalloc(&lse, sizeof(float) * batch * kHq), "malloc") &&
        ok(cudaMalloc(&obs, sizeof(float) * batch * hkv), "malloc") &&
        ok(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 256)), "malloc");
    sets.resize(n_sets);
    for (int s = 0; error == cudaSuccess && s < n_sets; ++s) {
      Set& x = sets[s];
      ok(cudaMalloc(&x.ring_k, ring_bytes), "malloc ring") &&
          ok(cudaMalloc(&x.ring_v, ring_bytes), "malloc ring") &&
          ok(cudaMalloc(&x.q, std::size_t(batch) * kHq * kv_row), "malloc") &&
          ok(cudaMalloc(&x.k_new, std::size_t(batch) * hkv * kv_row), "malloc") &&
          ok(cudaMalloc(&x.v_new, std::size_t(batch) * hkv * kv_row), "malloc") &&
          ok(cudaMalloc(&x.maw, sizeof(float) * batch * hkv * window), "malloc") &&
          ok(fill_random_bf16(x.ring_k, ring_bytes, 4 * s), "fill") &&
          ok(fill_random_bf16(x.ring_v, ring_bytes, 4 * s + 1), "fill") &&
          ok(fill_random_bf16(x.q, std::size_t(batch) * kHq * kv_row, 4 * s + 2), "fill") &&
          ok(fill_random_bf16(x.k_new, std::size_t(batch) * hkv * kv_row, 4 * s + 3), "fill") &&
          ok(fill_random_bf16(x.v_new, std::size_t(batch) * hkv * kv_row, 4 * s + 5), "fill") &&
          ok(cudaMemset(x.maw, 0, sizeof(float) * batch * hkv * window), "memset");
    }
    p.o = o;
    p.lse = lse;
    p.obs_new = obs;
    p.workspace = ws;
    p.workspace_bytes = ws_bytes;
    if (error == cudaSuccess) {
      p.ring_k = sets[0].ring_k;  // the path depends on the pointers' alignment too
      p.ring_v = sets[0].ring_v;
      p.q = sets[0].q;
      p.k_new = sets[0].k_new;
      p.v_new = sets[0].v_new;
      plan = hgca::gpu::window_attention_plan(p);
    }
    for (int r = 0; error == cudaSuccess && r < n_sets; ++r) ok(call(r), "warm-up");
    if (error == cudaSuccess) ok(cudaStreamSynchronize(stream), "warm-up sync");
  }

  cudaError_t call(int s) {
    p.ring_k = sets[s].ring_k;
    p.ring_v = sets[s].ring_v;
    p.q = sets[s].q;
    p.k_new = sets[s].k_new;
    p.v_new = sets[s].v_new;
    p.ring_maw = sets[s].maw;
    return static_cast<cudaError_t>(hgca::gpu::launch_window_attention(p, stream));
  }

  ~Fixture() {
    for (Set& x : sets) {
      cudaFree(x.ring_k);
      cudaFree(x.ring_v);
      cudaFree(x.q);
      cudaFree(x.k_new);
      cudaFree(x.v_new);
      cudaFree(x.maw);
    }
    cudaFree(o);
    cudaFree(lse);
    cudaFree(obs);
    cudaFree(ws);
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    if (stream) cudaStreamDestroy(stream);
  }
};

void BM_WindowDecode(benchmark::State& state) {
  const auto batch = static_cast<int32_t>(state.range(0));
  const auto hkv = static_cast<int32_t>(state.range(1));
  const auto window = static_cast<int32_t>(state.range(2));
  // Every shape's buffers stay allocated until the program ends, as the runtime's window slab
  // does: for seconds after gigabytes are freed, the next shape runs several per cent slower, and
  // SDPA too (bench/results/gpu-window/sweep-context/). Only when the device is full are they freed.
  static std::map<std::tuple<int32_t, int32_t, int32_t>, std::unique_ptr<Fixture>> fixtures;
  const auto key = std::make_tuple(batch, hkv, window);
  auto it = fixtures.find(key);
  if (it == fixtures.end()) {
    auto fresh = std::make_unique<Fixture>(batch, hkv, window);
    if (fresh->error == cudaErrorMemoryAllocation && !fixtures.empty()) {
      fresh.reset();
      fixtures.clear();
      fresh = std::make_unique<Fixture>(batch, hkv, window);
    }
    it = fixtures.emplace(key, std::move(fresh)).first;
  }
  Fixture& f = *it->second;
  if (f.error != cudaSuccess) {
    state.SkipWithError((std::string(f.failed) + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  const int reps = std::max(f.n_sets, 8);
  std::vector<double> per_call;
  for (auto _ : state) {
    cudaEventRecord(f.ev0, f.stream);
    for (int r = 0; r < reps; ++r) f.ok(f.call(r % f.n_sets), "launch");
    cudaEventRecord(f.ev1, f.stream);
    if (!f.ok(cudaEventSynchronize(f.ev1), "sync")) break;
    float ms = 0;
    cudaEventElapsedTime(&ms, f.ev0, f.ev1);
    per_call.push_back(ms * 1e-3 / reps);
    state.SetIterationTime(per_call.back());
  }
  if (f.error != cudaSuccess) {
    state.SkipWithError((std::string(f.failed) + ": " + cudaGetErrorString(f.error)).c_str());
    return;
  }
  if (per_call.empty()) return;
  std::sort(per_call.begin(), per_call.end());
  const double t = per_call[per_call.size() / 2];  // median over iterations
  state.SetBytesProcessed(static_cast<int64_t>(f.kv_bytes) * state.iterations());
  state.counters["us"] = t * 1e6;
  state.counters["kv_TBps"] = static_cast<double>(f.kv_bytes) / t * 1e-12;
  state.counters["sets"] = f.n_sets;
  state.counters["calls_per_iter"] = reps;
  state.counters["workspace_MB"] = static_cast<double>(f.ws_bytes) / (1 << 20);
  // 1: the decode kernels in clusters; 0: split + combine; -1: the generic path (G 16).
  state.counters["cluster"] = f.plan.path == hgca::gpu::WindowAttentionPath::kDecodeCluster ? 1
                              : f.plan.path == hgca::gpu::WindowAttentionPath::kDecodeCombine ? 0
                                                                                               : -1;
  state.counters["slices"] = f.plan.slices;
  state.counters["tail_seqs"] = f.plan.tail_sequences;  // in a second launch of tail_slices
  state.counters["tail_slices"] = f.plan.tail_slices;
}

// args: batch, Hkv, window (full, tail ≠ 0)
BENCHMARK(BM_WindowDecode)
    ->ArgNames({"batch", "hkv", "window"})
    ->ArgsProduct({{1, 16, 64}, {32, 8, 4}, {1024, 4096, 16384}})
    // Fewer waves of 7-slice clusters than batch 16 at G 4 (the cluster path's tail launch).
    ->Args({8, 8, 16384})
    ->Args({12, 8, 16384})
    // G 16: no decode kernel takes it; the generic path with its key split.
    ->ArgsProduct({{1, 16, 64}, {2}, {1024, 4096, 16384}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    // Fixed: each iteration times `calls_per_iter` calls and reports the per-call time, so a
    // minimum time would make Google Benchmark run calls_per_iter times longer than asked.
    ->Iterations(30);

/// Append / prefill (the generic path): one sequence, n_new tokens after a window of w entries,
/// bf16, D 128, Hq 32, Hkv 8; reported as time and the attention FLOP rate (QK and PV, causal).
void BM_WindowAppend(benchmark::State& state) {
  const auto n_new = static_cast<int32_t>(state.range(0));
  const auto w = static_cast<int32_t>(state.range(1));
  constexpr int32_t kHkv = 8;
  const int32_t cap = std::max(w, 1);
  const std::size_t row = std::size_t{kD} * 2;
  void *rk = nullptr, *rv = nullptr, *q = nullptr, *kn = nullptr, *vn = nullptr;
  float *maw = nullptr, *o = nullptr, *lse = nullptr, *obs = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  const cudaError_t e = [&] {
    cudaError_t r;
    if ((r = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) ||
        (r = cudaEventCreate(&ev0)) || (r = cudaEventCreate(&ev1)) ||
        (r = cudaMalloc(&rk, kHkv * cap * row)) || (r = cudaMalloc(&rv, kHkv * cap * row)) ||
        (r = cudaMalloc(&q, std::size_t(n_new) * kHq * row)) ||
        (r = cudaMalloc(&kn, std::size_t(n_new) * kHkv * row)) ||
        (r = cudaMalloc(&vn, std::size_t(n_new) * kHkv * row)) ||
        (r = cudaMalloc(&maw, sizeof(float) * kHkv * cap)) ||
        (r = cudaMalloc(&o, sizeof(float) * n_new * kHq * kD)) ||
        (r = cudaMalloc(&lse, sizeof(float) * n_new * kHq)) ||
        (r = cudaMalloc(&obs, sizeof(float) * n_new * kHkv)) ||
        (r = fill_random_bf16(rk, kHkv * cap * row, 1)) ||
        (r = fill_random_bf16(rv, kHkv * cap * row, 2)) ||
        (r = fill_random_bf16(q, std::size_t(n_new) * kHq * row, 3)) ||
        (r = fill_random_bf16(kn, std::size_t(n_new) * kHkv * row, 4)) ||
        (r = fill_random_bf16(vn, std::size_t(n_new) * kHkv * row, 5)) ||
        (r = cudaMemset(maw, 0, sizeof(float) * kHkv * cap)))
      return r;
    return cudaSuccess;
  }();
  hgca::gpu::WindowSeq seq{0, 0, n_new, w, w / 3, 0};
  hgca::gpu::WindowAttentionParams p;
  p.dtype = hgca::DType::kBFloat16;
  p.n_q_heads = kHq;
  p.n_kv_heads = kHkv;
  p.head_dim = kD;
  p.capacity = cap;
  p.sm_scale = 1.0f / std::sqrt(float(kD));
  p.q = q;
  p.k_new = kn;
  p.v_new = vn;
  p.ring_k = rk;
  p.ring_v = rv;
  p.ring_maw = maw;
  p.o = o;
  p.lse = lse;
  p.obs_new = obs;
  p.seqs = &seq;
  p.batch = 1;
  cudaError_t err = e;
  if (err == cudaSuccess) err = static_cast<cudaError_t>(hgca::gpu::launch_window_attention(p, stream));
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  double total = 0;
  for (auto _ : state) {
    if (err != cudaSuccess) break;
    cudaEventRecord(ev0, stream);
    err = static_cast<cudaError_t>(hgca::gpu::launch_window_attention(p, stream));
    cudaEventRecord(ev1, stream);
    if (err == cudaSuccess) err = cudaEventSynchronize(ev1);
    float ms = 0;
    cudaEventElapsedTime(&ms, ev0, ev1);
    total += ms * 1e-3;
    state.SetIterationTime(ms * 1e-3);
  }
  if (err != cudaSuccess) {
    state.SkipWithError(cudaGetErrorString(err));
  } else if (state.iterations() > 0) {
    const double t = total / static_cast<double>(state.iterations());
    // Score pairs seen: Σ_r (w + r + 1); 4·D flops each (QK and PV) per query head.
    const double pairs = double(n_new) * w + double(n_new) * (n_new + 1) / 2;
    state.counters["us"] = t * 1e6;
    state.counters["attn_TFLOPs"] = pairs * kHq * 4.0 * kD / t * 1e-12;
  }
  for (void* x : {rk, rv, q, kn, vn}) cudaFree(x);
  for (float* x : {maw, o, lse, obs}) cudaFree(x);
  if (ev0) cudaEventDestroy(ev0);
  if (ev1) cudaEventDestroy(ev1);
  if (stream) cudaStreamDestroy(stream);
}

// args: n_new, window entries before the call
BENCHMARK(BM_WindowAppend)
    ->ArgNames({"n_new", "w"})
    ->Args({16, 4096})
    ->Args({512, 4096})
    ->Args({2048, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
