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
#include <random>
#include <string>
#include <vector>

#include "gpu/window_attention.hpp"

namespace {

constexpr int32_t kHq = 32, kD = 128;
constexpr std::size_t kMinWorkingSet = 256u << 20;  // > 4 × the H200's 60 MB L2
constexpr int kMaxSets = 64;

bool check(cudaError_t e, benchmark::State& state, const char* what) {
  if (e == cudaSuccess) return true;
  state.SkipWithError((std::string(what) + ": " + cudaGetErrorString(e)).c_str());
  return false;
}

/// Fills `bytes` of device memory with random bf16 N(0, 1) values: one 16 MB host chunk, then
/// device-to-device copies of it at seed-dependent offsets (fast; the data never repeats within
/// any 8 MB window, and nothing is zero).
cudaError_t fill_random_bf16(void* dst, std::size_t bytes, uint64_t seed) {
  constexpr std::size_t kChunk = std::size_t{16} << 20;
  static void* device_chunk = [] {
    std::vector<uint16_t> v(kChunk / 2);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& x : v) {
      const float f = dist(rng);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      x = static_cast<uint16_t>(u >> 16);
    }
    void* d = nullptr;
    if (cudaMalloc(&d, kChunk) != cudaSuccess ||
        cudaMemcpy(d, v.data(), kChunk, cudaMemcpyHostToDevice) != cudaSuccess)
      return static_cast<void*>(nullptr);
    return d;
  }();
  if (device_chunk == nullptr) return cudaErrorMemoryAllocation;
  auto* d = static_cast<char*>(dst);
  constexpr std::size_t kPiece = kChunk / 2;
  for (std::size_t off = 0; off < bytes; off += kPiece) {
    const std::size_t shift = ((seed * 7919 + off / kPiece) * 4099 * 16) % kPiece;
    const std::size_t n = std::min(kPiece, bytes - off);
    if (cudaError_t e = cudaMemcpy(d + off, static_cast<const char*>(device_chunk) + shift, n,
                                   cudaMemcpyDeviceToDevice);
        e != cudaSuccess)
      return e;
  }
  return cudaDeviceSynchronize();
}

struct Set {
  void *ring_k = nullptr, *ring_v = nullptr, *q = nullptr, *k_new = nullptr, *v_new = nullptr;
  float* maw = nullptr;
};

void BM_WindowDecode(benchmark::State& state) {
  const auto batch = static_cast<int32_t>(state.range(0));
  const auto hkv = static_cast<int32_t>(state.range(1));
  const auto window = static_cast<int32_t>(state.range(2));
  const std::size_t kv_row = std::size_t{kD} * 2;
  const std::size_t ring_bytes = std::size_t(batch) * hkv * window * kv_row;  // K (or V)
  const std::size_t kv_bytes = 2 * ring_bytes;  // what one call must read of the windows
  const int n_sets = static_cast<int>(
      std::clamp<std::size_t>((kMinWorkingSet + kv_bytes - 1) / kv_bytes, 1, kMaxSets));

  std::vector<Set> sets(n_sets);
  float *o = nullptr, *lse = nullptr, *obs = nullptr;
  void* ws = nullptr;
  std::vector<hgca::gpu::WindowSeq> seqs(batch);
  for (int32_t i = 0; i < batch; ++i)
    seqs[i] = hgca::gpu::WindowSeq{i, int64_t{i} * hkv, 1, window, window / 3 + 1, i};

  hgca::gpu::WindowAttentionParams p;
  p.dtype = hgca::DType::kBFloat16;
  p.n_q_heads = kHq;
  p.n_kv_heads = hkv;
  p.head_dim = kD;
  p.capacity = window;
  p.sm_scale = 1.0f / std::sqrt(float(kD));
  p.alpha = 0.1f;
  p.seqs = seqs.data();
  p.batch = batch;
  const std::size_t ws_bytes = hgca::gpu::window_attention_workspace_bytes(p, batch, window, 1);
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  bool ok = check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), state, "stream") &&
            check(cudaEventCreate(&ev0), state, "event") &&
            check(cudaEventCreate(&ev1), state, "event") &&
            check(cudaMalloc(&o, sizeof(float) * batch * kHq * kD), state, "malloc") &&
            check(cudaMalloc(&lse, sizeof(float) * batch * kHq), state, "malloc") &&
            check(cudaMalloc(&obs, sizeof(float) * batch * hkv), state, "malloc") &&
            check(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 256)), state, "malloc");
  for (int s = 0; ok && s < n_sets; ++s) {
    Set& x = sets[s];
    ok = check(cudaMalloc(&x.ring_k, ring_bytes), state, "malloc ring") &&
         check(cudaMalloc(&x.ring_v, ring_bytes), state, "malloc ring") &&
         check(cudaMalloc(&x.q, std::size_t(batch) * kHq * kv_row), state, "malloc") &&
         check(cudaMalloc(&x.k_new, std::size_t(batch) * hkv * kv_row), state, "malloc") &&
         check(cudaMalloc(&x.v_new, std::size_t(batch) * hkv * kv_row), state, "malloc") &&
         check(cudaMalloc(&x.maw, sizeof(float) * batch * hkv * window), state, "malloc") &&
         check(fill_random_bf16(x.ring_k, ring_bytes, 4 * s), state, "fill") &&
         check(fill_random_bf16(x.ring_v, ring_bytes, 4 * s + 1), state, "fill") &&
         check(fill_random_bf16(x.q, std::size_t(batch) * kHq * kv_row, 4 * s + 2), state, "fill") &&
         check(fill_random_bf16(x.k_new, std::size_t(batch) * hkv * kv_row, 4 * s + 3), state, "fill") &&
         check(fill_random_bf16(x.v_new, std::size_t(batch) * hkv * kv_row, 4 * s + 5), state, "fill") &&
         check(cudaMemset(x.maw, 0, sizeof(float) * batch * hkv * window), state, "memset");
  }
  p.o = o;
  p.lse = lse;
  p.obs_new = obs;
  p.workspace = ws;
  p.workspace_bytes = ws_bytes;
  auto call = [&](int s) {
    p.ring_k = sets[s].ring_k;
    p.ring_v = sets[s].ring_v;
    p.q = sets[s].q;
    p.k_new = sets[s].k_new;
    p.v_new = sets[s].v_new;
    p.ring_maw = sets[s].maw;
    return static_cast<cudaError_t>(hgca::gpu::launch_window_attention(p, stream));
  };
  const int reps = std::max(n_sets, 8);
  for (int r = 0; ok && r < n_sets; ++r) ok = check(call(r), state, "warm-up");
  ok = ok && check(cudaStreamSynchronize(stream), state, "warm-up sync");

  double total_s = 0;
  for (auto _ : state) {
    if (!ok) break;
    cudaEventRecord(ev0, stream);
    for (int r = 0; r < reps; ++r)
      if (!check(call(r % n_sets), state, "launch")) {
        ok = false;
        break;
      }
    cudaEventRecord(ev1, stream);
    if (!ok || !check(cudaEventSynchronize(ev1), state, "sync")) break;
    float ms = 0;
    cudaEventElapsedTime(&ms, ev0, ev1);
    const double per_call = ms * 1e-3 / reps;
    total_s += per_call;
    state.SetIterationTime(per_call);
  }
  if (ok && state.iterations() > 0) {
    const double t = total_s / static_cast<double>(state.iterations());
    state.SetBytesProcessed(static_cast<int64_t>(kv_bytes) * state.iterations());
    state.counters["us"] = t * 1e6;
    state.counters["kv_TBps"] = static_cast<double>(kv_bytes) / t * 1e-12;
    state.counters["sets"] = n_sets;
    state.counters["workspace_MB"] = static_cast<double>(ws_bytes) / (1 << 20);
  }
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

// args: batch, Hkv, window (full, tail ≠ 0)
BENCHMARK(BM_WindowDecode)
    ->ArgNames({"batch", "hkv", "window"})
    ->ArgsProduct({{1, 16, 64}, {32, 8}, {1024, 4096, 16384}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
