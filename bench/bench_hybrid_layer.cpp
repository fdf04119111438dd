// One hybrid decode layer as the CUDA backend runs it — the window's dense attention on the GPU while
// the CPU attends to 10 % of the store, then the zero-copy merge — against the obvious alternative:
// copy all the offloaded KV to the GPU and attend to the whole context there. Both timed with CUDA
// events in the same run. Also the merge kernel alone reading the CPU's state from mapped memory,
// and what bounds it from below (merge_floor.cu): an empty launch, the mapped read alone, the copy
// engine.
//
// The layer is assembled from the runtime's own stages (window kernel, sparse engine, merge) on
// synthetic state: filling a 128K-token store through the API would take the CPU's append path
// minutes per sequence. Shapes: Hq 32, Hkv 8, D 128, bf16, window W = 1024.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/sparse_engine.hpp"
#include "cuda_timing.hpp"
#include "dtype.hpp"
#include "gpu/host_calls.hpp"
#include "gpu/window_attention.hpp"
#include "merge/merge_cuda.hpp"
#include "merge_floor.hpp"

namespace {

using hgca::detail::bf16_t;
constexpr int32_t kHq = 32, kHkv = 8, kD = 128, kW = 1024;
constexpr double kSelected = 0.10;


std::vector<bf16_t> random_bf16(std::size_t n, uint64_t seed) {
  std::vector<bf16_t> v(n);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto& x : v) x = hgca::detail::from_float<bf16_t>(dist(rng));
  return v;
}

/// Fills `bytes` at `dst` (device or pinned) from a 64 MiB random pattern.
cudaError_t fill(void* dst, std::size_t bytes) {
  static const std::vector<bf16_t> pattern = random_bf16(std::size_t{32} << 20, 5);
  const std::size_t chunk = pattern.size() * sizeof(bf16_t);
  for (std::size_t off = 0; off < bytes; off += chunk) {
    if (cudaError_t e = cudaMemcpy(static_cast<char*>(dst) + off, pattern.data(), std::min(chunk, bytes - off),
                                   cudaMemcpyDefault);
        e != cudaSuccess) {
      return e;
    }
  }
  return cudaSuccess;
}

/// The CPU's side of the layer: the runtime's sparse engine over every (sequence, KV head)'s
/// contiguous context cache (one decode query row, the G query heads of the KV head together).
struct CpuSide {
  tbb::task_arena* arena;
  const hgca::cpu::SparseEngine* engine;
  std::vector<hgca::cpu::SparseItem> items;

  static void run(void* self) {
    auto& s = *static_cast<CpuSide*>(self);
    (void)s.engine->attend(hgca::DType::kBFloat16, kHq / kHkv, kD, 1.0f / std::sqrt(static_cast<float>(kD)),
                           s.items, *s.arena);
  }
};

/// Device and pinned memory for one shape, and the two ways of running the layer.
void BM_DecodeLayer(benchmark::State& state) {
  const auto context = state.range(0);
  const auto batch = static_cast<int32_t>(state.range(1));
  // 1: hybrid, its CPU side handed over as the runtime does by default (stream memory operations and
  // a polling thread); 2: hybrid through a CUDA host function; 0: the peer.
  const bool hybrid = state.range(2) != 0;
  std::unique_ptr<hgca::gpu::HostCalls> host_calls;
  if (hybrid) {
    const auto mode = state.range(2) == 1 ? hgca::HostHandoff::kPoll : hgca::HostHandoff::kCallback;
    if (!hgca::gpu::HostCalls::create(mode, &host_calls).is_ok()) return state.SkipWithError("HostCalls::create failed");
  }
  const int64_t offloaded = context - kW;
  const auto selected = static_cast<int64_t>(static_cast<double>(offloaded) * kSelected);
  const std::size_t es = sizeof(bf16_t);

  cudaStream_t s = nullptr, side = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BENCH_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t start, stop, fork, cpu_done;
  for (cudaEvent_t* ev : {&start, &stop}) BENCH_CUDA(cudaEventCreate(ev));
  for (cudaEvent_t* ev : {&fork, &cpu_done}) BENCH_CUDA(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));

  // The query, the new token, the outputs; the GPU's keys: the window (hybrid) or everything.
  const int64_t gpu_keys = hybrid ? kW : context - 1;  // + the new token = context keys in all
  void *q, *k_new, *v_new, *ring_k, *ring_v, *out, *ws;
  float *ring_maw, *o_gpu, *lse_gpu, *obs;
  const std::size_t ring_bytes = static_cast<std::size_t>(batch) * kHkv * gpu_keys * kD * es;
  BENCH_CUDA(cudaMalloc(&q, static_cast<std::size_t>(batch) * kHq * kD * es));
  BENCH_CUDA(cudaMalloc(&k_new, static_cast<std::size_t>(batch) * kHkv * kD * es));
  BENCH_CUDA(cudaMalloc(&v_new, static_cast<std::size_t>(batch) * kHkv * kD * es));
  BENCH_CUDA(cudaMalloc(&ring_k, ring_bytes));
  BENCH_CUDA(cudaMalloc(&ring_v, ring_bytes));
  BENCH_CUDA(cudaMalloc(&ring_maw, static_cast<std::size_t>(batch) * kHkv * gpu_keys * sizeof(float)));
  BENCH_CUDA(cudaMalloc(&out, static_cast<std::size_t>(batch) * kHq * kD * es));
  BENCH_CUDA(cudaMalloc(&o_gpu, static_cast<std::size_t>(batch) * kHq * kD * sizeof(float)));
  BENCH_CUDA(cudaMalloc(&lse_gpu, static_cast<std::size_t>(batch) * kHq * sizeof(float)));
  BENCH_CUDA(cudaMalloc(&obs, static_cast<std::size_t>(batch) * kHkv * sizeof(float)));
  for (void* p : {q, k_new, v_new, ring_k, ring_v}) {
    BENCH_CUDA(fill(p, p == q ? static_cast<std::size_t>(batch) * kHq * kD * es
                      : p == ring_k || p == ring_v ? ring_bytes
                                                   : static_cast<std::size_t>(batch) * kHkv * kD * es));
  }
  BENCH_CUDA(cudaMemset(ring_maw, 0, static_cast<std::size_t>(batch) * kHkv * gpu_keys * sizeof(float)));

  std::vector<hgca::gpu::WindowSeq> seqs(static_cast<std::size_t>(batch));
  for (int32_t b = 0; b < batch; ++b) seqs[b] = {b, b * kHkv, 1, static_cast<int32_t>(gpu_keys), 0, b};
  hgca::gpu::WindowAttentionParams wp;
  wp.dtype = hgca::DType::kBFloat16;
  wp.n_q_heads = kHq;
  wp.n_kv_heads = kHkv;
  wp.head_dim = kD;
  wp.capacity = static_cast<int32_t>(gpu_keys);
  wp.sm_scale = 1.0f / std::sqrt(static_cast<float>(kD));
  wp.seqs = seqs.data();
  wp.batch = batch;
  const std::size_t ws_bytes = hgca::gpu::window_attention_workspace_bytes(wp, batch, static_cast<int32_t>(gpu_keys), 1);
  BENCH_CUDA(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 16)));
  wp.q = q;
  wp.k_new = k_new;
  wp.v_new = v_new;
  wp.ring_k = ring_k;
  wp.ring_v = ring_v;
  wp.ring_maw = ring_maw;
  wp.o = o_gpu;
  wp.lse = lse_gpu;
  wp.obs_new = obs;
  wp.workspace = ws;
  wp.workspace_bytes = ws_bytes;

  // Hybrid: the context caches in DRAM, the CPU's result in mapped memory. Peer: the offloaded KV
  // in pinned memory, copied into the GPU's key range (after the window) before attending.
  tbb::task_arena arena;
  const hgca::cpu::SparseEngine engine;
  std::vector<bf16_t> ctx_k, ctx_v;
  void *q_host = nullptr, *offload_k = nullptr, *offload_v = nullptr;
  float *o_cpu = nullptr, *lse_cpu = nullptr;
  const std::size_t offload_bytes = static_cast<std::size_t>(batch) * kHkv * (gpu_keys - kW) * kD * es;
  CpuSide cpu{};
  if (hybrid) {
    ctx_k.resize(static_cast<std::size_t>(batch) * kHkv * selected * kD);
    ctx_v.resize(ctx_k.size());
    BENCH_CUDA(fill(ctx_k.data(), ctx_k.size() * es));
    BENCH_CUDA(fill(ctx_v.data(), ctx_v.size() * es));
    BENCH_CUDA(cudaHostAlloc(&q_host, static_cast<std::size_t>(batch) * kHq * kD * es, cudaHostAllocDefault));
    BENCH_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&o_cpu), static_cast<std::size_t>(batch) * kHq * kD * 4, cudaHostAllocMapped));
    BENCH_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&lse_cpu), static_cast<std::size_t>(batch) * kHq * 4, cudaHostAllocMapped));
    cpu = {&arena, &engine, {}};
    constexpr int32_t g = kHq / kHkv;
    for (int32_t b = 0; b < batch; ++b) {
      for (int32_t h = 0; h < kHkv; ++h) {
        const int64_t base = (static_cast<int64_t>(b) * kHkv + h) * selected * kD;
        const int64_t row = static_cast<int64_t>(b) * kHq + h * g;
        cpu.items.push_back({ctx_k.data() + base, ctx_v.data() + base, selected,
                             static_cast<const bf16_t*>(q_host) + row * kD, kHq * kD, 1, o_cpu + row * kD, kHq * kD,
                             lse_cpu + row, kHq});
      }
    }
  } else {
    BENCH_CUDA(cudaHostAlloc(&offload_k, offload_bytes, cudaHostAllocDefault));
    BENCH_CUDA(cudaHostAlloc(&offload_v, offload_bytes, cudaHostAllocDefault));
    BENCH_CUDA(fill(offload_k, offload_bytes));
    BENCH_CUDA(fill(offload_v, offload_bytes));
  }

  auto layer = [&]() -> cudaError_t {
    cudaError_t e = cudaSuccess;
    if (hybrid) {
      if ((e = cudaEventRecord(fork, s)) || (e = cudaStreamWaitEvent(side, fork, 0)) ||
          (e = cudaMemcpyAsync(q_host, q, static_cast<std::size_t>(batch) * kHq * kD * es, cudaMemcpyDeviceToHost, side)) ||
          (e = host_calls->launch(side, &CpuSide::run, &cpu, false).is_ok() ? cudaSuccess : cudaErrorUnknown) ||
          (e = cudaEventRecord(cpu_done, side)) ||
          (e = static_cast<cudaError_t>(hgca::gpu::launch_window_attention(wp, s))) ||
          (e = cudaStreamWaitEvent(s, cpu_done, 0))) {
        return e;
      }
      return static_cast<cudaError_t>(hgca::merge::launch_merge_states(
          o_gpu, lse_gpu, o_cpu, lse_cpu, static_cast<int64_t>(batch) * kHq, kD, hgca::DType::kBFloat16, out, nullptr, s));
    }
    // The offloaded KV of every (sequence, KV head) goes to its place in the GPU's key array: one
    // copy per (sequence, head, K/V) of (context − W) rows; the window stays where it is.
    for (int32_t b = 0; b < batch && e == cudaSuccess; ++b) {
      for (int32_t h = 0; h < kHkv && e == cudaSuccess; ++h) {
        const std::size_t rows = static_cast<std::size_t>(gpu_keys - kW);
        const std::size_t dst = ((static_cast<std::size_t>(b) * kHkv + h) * gpu_keys) * kD * es;
        const std::size_t src = ((static_cast<std::size_t>(b) * kHkv + h) * rows) * kD * es;
        e = cudaMemcpyAsync(static_cast<char*>(ring_k) + dst, static_cast<char*>(offload_k) + src, rows * kD * es,
                            cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) {
          e = cudaMemcpyAsync(static_cast<char*>(ring_v) + dst, static_cast<char*>(offload_v) + src, rows * kD * es,
                              cudaMemcpyHostToDevice, s);
        }
      }
    }
    if (e != cudaSuccess) return e;
    return static_cast<cudaError_t>(hgca::gpu::launch_window_attention(wp, s));
  };

  for (int i = 0; i < 3; ++i) BENCH_CUDA(layer());  // warm-up
  BENCH_CUDA(cudaStreamSynchronize(s));
  for (auto _ : state) {
    float ms = 0;
    BENCH_CUDA(hgca::bench::event_ms(s, start, stop, layer, &ms));
    state.SetIterationTime(ms / 1e3);
  }
  state.counters["context"] = static_cast<double>(context);
  state.counters["batch"] = batch;
  state.counters["selected_tokens"] = hybrid ? static_cast<double>(selected) : static_cast<double>(offloaded);
  state.counters["cpu_kv_bytes"] = hybrid ? 2.0 * static_cast<double>(ctx_k.size()) * es : 0.0;
  state.counters["pcie_kv_bytes"] = hybrid ? 0.0 : 2.0 * static_cast<double>(offload_bytes);
  state.counters["handoff_poll"] = state.range(2) == 1 ? 1 : 0;
  state.SetLabel(hybrid ? "hybrid: window on GPU ∥ 10% of store on CPU, merge" : "peer: copy offloaded KV, attend all on GPU");

  cudaDeviceSynchronize();
  for (void* p : {q, k_new, v_new, ring_k, ring_v, out, ws}) cudaFree(p);
  for (float* p : {ring_maw, o_gpu, lse_gpu, obs}) cudaFree(p);
  for (void* p : {q_host, offload_k, offload_v}) if (p) cudaFreeHost(p);
  for (float* p : {o_cpu, lse_cpu}) if (p) cudaFreeHost(p);
  for (cudaEvent_t e : {start, stop, fork, cpu_done}) cudaEventDestroy(e);
  cudaStreamDestroy(s);
  cudaStreamDestroy(side);
}

/// The merge's inputs, 32 tokens × 32 heads × 128 fp32, in 16 sets to rotate among so that nothing
/// stays in the GPU's L2: the window's side in device memory, the CPU's in mapped pinned memory
/// (write-combined when `write_combined`), a device copy of the CPU's side, the output.
struct MergeSets {
  static constexpr int64_t kRows = 32 * 32;
  static constexpr int kSets = 16;
  std::vector<float*> o_a, l_a, o_b, l_b, o_b_dev, l_b_dev, out;

  cudaError_t create(bool write_combined) {
    const std::vector<bf16_t> noise = random_bf16(kRows * kD, 3);
    std::vector<float> host(kRows * kD), lse(kRows);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = hgca::detail::to_float(noise[i]);
    for (int64_t r = 0; r < kRows; ++r) lse[r] = static_cast<float>(r % 13) - 6.0f;
    const unsigned flags = cudaHostAllocMapped | (write_combined ? cudaHostAllocWriteCombined : 0);
    for (int i = 0; i < kSets; ++i) {
      float *a, *la, *b, *lb, *bd, *lbd, *o;
      cudaError_t e = cudaSuccess;
      if ((e = cudaMalloc(&a, kRows * kD * 4)) || (e = cudaMalloc(&la, kRows * 4)) ||
          (e = cudaMalloc(&o, kRows * kD * 4)) || (e = cudaMalloc(&bd, kRows * kD * 4)) ||
          (e = cudaMalloc(&lbd, kRows * 4)) || (e = cudaHostAlloc(&b, kRows * kD * 4, flags)) ||
          (e = cudaHostAlloc(&lb, kRows * 4, flags)) ||
          (e = cudaMemcpy(a, host.data(), kRows * kD * 4, cudaMemcpyHostToDevice)) ||
          (e = cudaMemcpy(la, lse.data(), kRows * 4, cudaMemcpyHostToDevice)) ||
          (e = cudaMemcpy(bd, host.data(), kRows * kD * 4, cudaMemcpyHostToDevice)) ||
          (e = cudaMemcpy(lbd, lse.data(), kRows * 4, cudaMemcpyHostToDevice))) {
        return e;
      }
      std::memcpy(b, host.data(), kRows * kD * 4);
      std::memcpy(lb, lse.data(), kRows * 4);
      o_a.push_back(a), l_a.push_back(la), o_b.push_back(b), l_b.push_back(lb);
      o_b_dev.push_back(bd), l_b_dev.push_back(lbd), out.push_back(o);
    }
    return cudaSuccess;
  }
  /// The merge of set i on s, the CPU's side read from mapped pinned memory or (from_device) from
  /// its copy in device memory.
  int merge(int i, cudaStream_t s, bool from_device) const {
    return hgca::merge::launch_merge_states(o_a[i], l_a[i], from_device ? o_b_dev[i] : o_b[i],
                                            from_device ? l_b_dev[i] : l_b[i], kRows, kD,
                                            hgca::DType::kFloat32, out[i], nullptr, s);
  }
  /// Set i's CPU side copied into device memory on s, with its LSE when `lse`.
  cudaError_t copy_side(int i, cudaStream_t s, bool lse) const {
    cudaError_t e = cudaMemcpyAsync(o_b_dev[i], o_b[i], kRows * kD * 4, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && lse) e = cudaMemcpyAsync(l_b_dev[i], l_b[i], kRows * 4, cudaMemcpyHostToDevice, s);
    return e;
  }
  ~MergeSets() {
    cudaDeviceSynchronize();
    for (auto* v : {&o_a, &l_a, &o_b_dev, &l_b_dev, &out}) for (float* p : *v) cudaFree(p);
    for (auto* v : {&o_b, &l_b}) for (float* p : *v) cudaFreeHost(p);
  }
};

/// Times `launch(set, stream)` with CUDA events, rotating among `sets`: `queued` launches back to back
/// per iteration, the iteration's time divided by them (1: one launch on an idle stream, launch
/// latency included). `gated`: the iteration's work is enqueued behind a gate kernel that the host
/// opens once everything is queued, so the time starts when the GPU can run it, as in a decode step,
/// where the merge waits behind the window kernel and the CPU's result (the host's enqueue cost,
/// paid while the GPU is still busy, is left out; the GPU's own launch is not).
template <typename F>
void time_merge_sets(benchmark::State& state, F&& launch, int sets = MergeSets::kSets, int queued = 1,
                     bool gated = false) {
  cudaStream_t s = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  BENCH_CUDA(cudaEventCreate(&start));
  BENCH_CUDA(cudaEventCreate(&stop));
  unsigned* gate = nullptr;  // mapped pinned memory
  BENCH_CUDA(cudaHostAlloc(&gate, sizeof(unsigned), cudaHostAllocMapped));
  std::atomic_ref<unsigned> open(*gate);
  int i = 0;
  for (auto _ : state) {
    if (gated) {
      open.store(0);
      BENCH_CUDA(static_cast<cudaError_t>(hgca::bench::launch_gate(gate, s)));
    }
    float ms = 0;
    const cudaError_t timed = hgca::bench::event_ms(s, start, stop, [&] {
      cudaError_t e = cudaSuccess;
      for (int q = 0; q < queued && e == cudaSuccess; ++q, i = (i + 1) % sets) e = static_cast<cudaError_t>(launch(i, s));
      open.store(1);
      return e;
    }, &ms);
    open.store(1);  // also when event_ms failed before the launches: the gate never stays shut
    BENCH_CUDA(timed);
    state.SetIterationTime(ms / 1e3 / queued);
  }
  cudaFreeHost(gate);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
}

/// The merge of 32 tokens × 32 heads × 128 fp32, the CPU's side read from mapped pinned memory,
/// {launches queued per timed iteration: 1 = launch plus PCIe; 16 = each merge queued behind the
/// previous one; gated (1) or on an idle stream (0), see time_merge_sets}.
void BM_MergeZeroCopy(benchmark::State& state) {
  MergeSets m;
  BENCH_CUDA(m.create(false));
  time_merge_sets(state, [&](int i, cudaStream_t s) {
    return m.merge(i, s, false);
  }, MergeSets::kSets, static_cast<int>(state.range(0)), state.range(1) != 0);
  state.SetBytesProcessed(state.iterations() * MergeSets::kRows * (kD + 1) * 4);  // the mapped side's bytes
}

/// The floor of the merge's launch: an empty kernel of {blocks, threads, gated}, timed the same way.
void BM_MergeFloorEmpty(benchmark::State& state) {
  time_merge_sets(state, [&](int, cudaStream_t s) {
    return hgca::bench::launch_empty(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), s);
  }, MergeSets::kSets, 1, state.range(2) != 0);
}

/// The floor of the merge's PCIe read: only the CPU's side (values and LSE together), {threads per
/// block, float4 in flight per thread, nc loads, write-combined, quads per row (32: the whole side;
/// 1: 1/32 of it, about one round trip), buffer sets rotated among}.
void BM_MergeFloorRead(benchmark::State& state) {
  MergeSets m;
  BENCH_CUDA(m.create(state.range(3) != 0));
  unsigned* sink = nullptr;
  BENCH_CUDA(cudaMalloc(&sink, sizeof(unsigned)));
  const auto quads = static_cast<int32_t>(state.range(4));
  time_merge_sets(state, [&](int i, cudaStream_t s) {
    return hgca::bench::launch_mapped_read(m.o_b[i], m.l_b[i], MergeSets::kRows, quads,
                                           static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                           state.range(2) != 0, sink, s);
  }, static_cast<int>(state.range(5)));
  cudaFree(sink);
  state.SetBytesProcessed(state.iterations() * MergeSets::kRows * (quads * 4 + 1) * 4);
}

/// The link through the copy engine: cudaMemcpyAsync of the CPU's side into device memory, {with
/// its LSE as a second copy}.
void BM_MergeFloorCopy(benchmark::State& state) {
  MergeSets m;
  BENCH_CUDA(m.create(false));
  time_merge_sets(state, [&](int i, cudaStream_t s) {
    return m.copy_side(i, s, state.range(0) != 0);
  });
  state.SetBytesProcessed(state.iterations() * MergeSets::kRows * (kD + 1) * 4);  // the mapped side's bytes
}

/// The merge with both sides in device memory: what is not PCIe.
void BM_MergeFloorDevice(benchmark::State& state) {
  MergeSets m;
  BENCH_CUDA(m.create(false));
  time_merge_sets(state, [&](int i, cudaStream_t s) {
    return m.merge(i, s, true);
  });
}

/// The alternative to zero copy: copy the CPU's side into device memory, then merge from there.
void BM_MergeViaCopy(benchmark::State& state) {
  MergeSets m;
  BENCH_CUDA(m.create(false));
  time_merge_sets(state, [&](int i, cudaStream_t s) {
    const cudaError_t e = m.copy_side(i, s, true);
    return e != cudaSuccess ? static_cast<int>(e) : m.merge(i, s, true);
  });
  state.SetBytesProcessed(state.iterations() * MergeSets::kRows * (kD + 1) * 4);  // the mapped side's bytes
}

}  // namespace

#define HGCA_MERGE_BENCH(fn)                                                                         \
  BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly(true) \
      ->Iterations(2000)
HGCA_MERGE_BENCH(BM_MergeZeroCopy)->Args({1, 0})->Args({16, 0})->Args({1, 1});
HGCA_MERGE_BENCH(BM_MergeFloorEmpty)->Args({1, 32, 0})->Args({128, 256, 0})->Args({128, 256, 1});
// {threads, float4 per thread, nc, write-combined, quads per row, sets}: the merge's grid (256 × 1)
// with its variants first, then other shapes.
HGCA_MERGE_BENCH(BM_MergeFloorRead)
    ->Args({256, 1, 0, 0, 32, 16})->Args({256, 1, 0, 0, 1, 16})->Args({256, 1, 1, 0, 32, 16})
    ->Args({256, 1, 0, 1, 32, 16})->Args({256, 1, 0, 0, 32, 1})
    ->Args({128, 1, 0, 0, 32, 16})->Args({64, 1, 0, 0, 32, 16})->Args({32, 1, 0, 0, 32, 16})
    ->Args({512, 1, 0, 0, 32, 16})->Args({1024, 1, 0, 0, 32, 16})
    ->Args({256, 2, 0, 0, 32, 16})->Args({256, 4, 0, 0, 32, 16})->Args({256, 8, 0, 0, 32, 16})
    ->Args({128, 2, 0, 0, 32, 16})->Args({128, 4, 0, 0, 32, 16})
    ->Args({64, 2, 0, 0, 32, 16})->Args({64, 4, 0, 0, 32, 16})
    ->Args({1024, 2, 0, 0, 32, 16})->Args({1024, 4, 0, 0, 32, 16})->Args({512, 8, 0, 0, 32, 16});
HGCA_MERGE_BENCH(BM_MergeFloorCopy)->Arg(0)->Arg(1);
HGCA_MERGE_BENCH(BM_MergeFloorDevice);
HGCA_MERGE_BENCH(BM_MergeViaCopy);
HGCA_MERGE_BENCH(BM_MergeZeroCopy)->Args({1, 0})->Args({1, 1});  // again, last: drift over the run
// {context, batch, hybrid with the runtime's hand-off (1), hybrid with a CUDA host function (2), or peer (0)}
BENCHMARK(BM_DecodeLayer)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20)
    ->ArgsProduct({{32768, 131072}, {1, 16}, {1, 2, 0}});

BENCHMARK_MAIN();
