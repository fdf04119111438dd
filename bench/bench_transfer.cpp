// FlashH2D and FlashD2H against CUDA's own ways of moving scattered KV blocks, in the same run.
//
// H2D: blocks (4, 16, 64 KB) scattered at random in a 1 GiB pinned pool (far larger than the CPU's
// L3 and the GPU's L2), gathered into device memory: FlashH2D on 2, 4 and 8 SMs, one
// cudaMemcpyAsync per block, cudaMemcpyBatchAsync; and the link's ceiling, the same 256 MB in one
// contiguous cudaMemcpyAsync. CUDA events; GB/s of the median iteration. "_thp": the pool on
// transparent huge pages, registered with cudaHostRegister (what the store's pinned chunks could
// be), to see whether translating scattered 4 KB pages costs the GPU. "_queued": each iteration's
// gather is enqueued behind a compute kernel on its stream (0.6 ms on the GPU machine's H200:
// counter queued_behind_ms), as the runtime enqueues its transfers behind a step's GPU work, so
// that the host's time in the call (host_ms_median), where shorter, is hidden and the GPU's time
// alone is measured; without it the GPU is idle when the call starts. BM_H2DHost: the host's
// time in one flash_h2d call of n 16 KB spans.
// D2H: every step, 32 sequences each evict one block per KV head (Hkv 8, D 128, bf16; K and V),
// 256 MB in all (the store rows' `laps` 4: 1 GB, the same device rows moved four times). FlashD2H
// end to end, wall clock: each step's new rows go to pinned staging in one copy per K and V (2 to
// 64 staging slots), and CPU threads scatter them into the sequences' host
// windows and DRAM stores (kvmgr::MirroredKv::evict_and_insert, with selection; the blocks the new
// rows start allocated by the issuing thread as it issues the step's copy) exactly as the CUDA
// backend does ("store": fresh stores each iteration, in store memory kept from iteration to
// iteration; "store_cold": mostly in fresh chunks; "store_steady": the stores kept over the whole
// benchmark, so that their context caches seldom grow, in memory taken up front; "_varied": each
// sequence's evicted MAW drawn per step, not the same for all of them; `layers` L > 1:
// the steps go round L layers' sequences, whose scatters run side by side in L lanes, as the
// runtime's per-layer lanes do — at 4, 8, 16 and 32 layers with the runtime's staging slots (8
// slots of these 8 MiB steps in Options::staging_limit_bytes' 64 MiB, 2 per layer at 4 layers, 9
// at 8: never 1 per layer), and at 8, 16 and 32 layers also on 16 slots, session 32's rule of
// 128 MiB); "pool" scatters into the peers' destinations instead
// (scattered blocks of a pinned pool; "_streaming" with non-temporal stores, "_rows" by runs of
// staged rows), "copy_only" not at all. Counters copy_GBps and scatter_GBps give each part's own
// rate; selected_fraction, the stores' share of entries in their context sets; rows_streamed, whether
// the stores streamed their rows at the end (HGCA_BENCH_STORE_WRITES: auto, cached or streamed).
// Peers: one cudaMemcpyAsync per (sequence, head, K/V) block from the window's layout straight to
// those destinations, and cudaMemcpyBatchAsync of the same list (CUDA events).
// Interference: a compute-bound kernel alone, and with FlashD2H or an SM-based D2H copy beside it.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu/flash_d2h.hpp"
#include "cpu/pool.hpp"
#include "cuda_timing.hpp"
#include "gpu/flash_h2d.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"
#include "scatter_block.hpp"
#include "transfer_kernels.hpp"

namespace {


constexpr std::size_t kPoolBytes = std::size_t{1} << 30;
constexpr std::size_t kMoveBytes = std::size_t{256} << 20;  // per iteration, every method

/// Pinned host memory, freed on destruction.
struct Pinned {
  std::byte* p = nullptr;
  explicit Pinned(std::size_t bytes) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&p), bytes, cudaHostAllocDefault) != cudaSuccess) p = nullptr;
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { cudaFreeHost(p); }
};

/// Device memory, freed on destruction.
struct Device {
  std::byte* p = nullptr;
  explicit Device(std::size_t bytes) {
    if (cudaMalloc(reinterpret_cast<void**>(&p), bytes) != cudaSuccess) p = nullptr;
  }
  ~Device() { cudaFree(p); }
};

/// Random bytes (never time on zeros), filled in parallel.
void fill_random(std::byte* p, std::size_t bytes, uint64_t seed) {
  tbb::parallel_for(std::size_t{0}, bytes / 4096 + 1, [&](std::size_t page) {
    std::mt19937_64 rng(seed + page);
    const std::size_t end = std::min(bytes, (page + 1) * 4096);
    for (std::size_t i = page * 4096; i + 8 <= end; i += 8) {
      const uint64_t x = rng();
      std::memcpy(p + i, &x, 8);
    }
  });
}

/// The shared pinned pool the scattered blocks live in (allocated and filled once).
std::byte* pool() {
  static Pinned pinned(kPoolBytes);
  static const bool filled = pinned.p && (fill_random(pinned.p, kPoolBytes, 1), true);
  return filled ? pinned.p : nullptr;
}

/// The pool again, on 2 MB transparent huge pages where the kernel grants them, registered with
/// CUDA; `device` is the address the GPU uses.
struct ThpPool {
  std::byte* host = nullptr;
  std::byte* device = nullptr;
  double huge_fraction = 0.0;  // of the process's anonymous memory in huge pages, after filling
};
const ThpPool& thp_pool() {
  static const ThpPool pool = [] {
    ThpPool p;
    void* m = nullptr;
    if (posix_memalign(&m, std::size_t{2} << 20, kPoolBytes) != 0) return p;
    madvise(m, kPoolBytes, MADV_HUGEPAGE);
    fill_random(static_cast<std::byte*>(m), kPoolBytes, 2);
    void* d = nullptr;
    if (cudaHostRegister(m, kPoolBytes, cudaHostRegisterMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&d, m, 0) != cudaSuccess) {
      free(m);
      return p;
    }
    std::ifstream rollup("/proc/self/smaps_rollup");
    double anon = 0, huge = 0;
    for (std::string line; std::getline(rollup, line);) {  // "Anonymous:   123 kB"
      const auto number = [&] { return std::stod(line.substr(line.find(':') + 1)); };
      if (line.starts_with("Anonymous:")) anon = number();
      if (line.starts_with("AnonHugePages:")) huge = number();
    }
    p.host = static_cast<std::byte*>(m);
    p.device = static_cast<std::byte*>(d);
    p.huge_fraction = anon > 0 ? huge / anon : 0.0;
    return p;
  }();
  return pool;
}

/// `count` distinct block positions in the pool, in random order; a different draw per `seed`.
std::vector<std::size_t> scattered_blocks(std::size_t block, std::size_t count, uint64_t seed) {
  std::vector<std::size_t> slots(kPoolBytes / block);
  std::iota(slots.begin(), slots.end(), std::size_t{0});
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(seed));
  slots.resize(count);
  for (auto& s : slots) s *= block;
  return slots;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// How the batch peer calls cudaMemcpyBatchAsync: copies per call, and its one attribute set. The
/// default (4096 copies, stream order) spends its time in the driver before the copies start (host
/// 7.8-14.9 ms of a 9.5-16.8 ms run at 16 KB, session 45): fewer copies per call let the copy
/// engine start while the host issues the rest, and srcAccessOrder Any with
/// PreferOverlapWithCompute is what users of small KV copies chose (BM_H2D/memcpy_batch_tuned).
struct BatchCalls {
  std::size_t per_call = 4096;
  cudaMemcpySrcAccessOrder order = cudaMemcpySrcAccessOrderStream;
  unsigned flags = cudaMemcpyFlagDefault;
};

cudaError_t memcpy_batch(std::vector<void*>& dst, std::vector<const void*>& src, std::vector<std::size_t>& sizes,
                         cudaStream_t s, const BatchCalls& calls = {}) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = calls.order;
  attr.flags = calls.flags;
  std::size_t attr_index = 0;
  for (std::size_t i = 0; i < dst.size(); i += calls.per_call) {
    const std::size_t n = std::min(calls.per_call, dst.size() - i);
    if (cudaError_t e = cudaMemcpyBatchAsync(dst.data() + i, src.data() + i, sizes.data() + i, n, &attr, &attr_index, 1, s);
        e != cudaSuccess) {
      return e;
    }
  }
  return cudaSuccess;
}

// --- H2D -------------------------------------------------------------------------------------

/// kContiguous: the same bytes in one cudaMemcpyAsync from the start of the pool, what the link
/// carries at best (the ceiling of every scattered method).
enum class H2D { kFlash, kPerBlock, kBatch, kBatchTuned, kContiguous };

/// Args: block KB, SMs (FlashH2D only); kBatchTuned also copies per call and the attribute set
/// (0: stream order, 1: any order, 2: any order and PreferOverlapWithCompute). `kThp`: sources in
/// thp_pool(). `kQueued`: each gather enqueued behind compute (see the top of the file).
template <H2D kMethod, bool kThp = false, bool kQueued = false>
void BM_H2D(benchmark::State& state) {
  const std::size_t block = static_cast<std::size_t>(state.range(0)) << 10;
  const auto sms = static_cast<int32_t>(state.range(1));
  const std::size_t count = kMoveBytes / block;
  std::byte* src = kThp ? thp_pool().host : pool();
  std::byte* src_device = kThp ? thp_pool().device : src;  // the address FlashH2D reads
  Device dst(kMoveBytes);
  if (!src || !dst.p) return state.SkipWithError("out of pinned or device memory");
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BENCH_CUDA(cudaEventCreate(&start));
  BENCH_CUDA(cudaEventCreate(&stop));

  // A few draws of scattered sources, used in turn.
  constexpr int kDraws = 4;
  std::vector<std::vector<hgca::gpu::H2DSpan>> spans(kDraws);
  std::vector<std::vector<void*>> dsts(kDraws);
  std::vector<std::vector<const void*>> srcs(kDraws);
  std::vector<std::size_t> sizes(count, block);
  BatchCalls batch_calls;
  if (kMethod == H2D::kBatchTuned) {
    batch_calls.per_call = static_cast<std::size_t>(state.range(2));
    batch_calls.order = state.range(3) > 0 ? cudaMemcpySrcAccessOrderAny : cudaMemcpySrcAccessOrderStream;
    batch_calls.flags = state.range(3) > 1 ? cudaMemcpyFlagPreferOverlapWithCompute : cudaMemcpyFlagDefault;
  }
  for (int d = 0; d < kDraws; ++d) {
    const auto at = scattered_blocks(block, count, 100 + d);
    for (std::size_t i = 0; i < count; ++i) {
      spans[d].push_back({src_device + at[i], dst.p + i * block, static_cast<int64_t>(block)});
      dsts[d].push_back(dst.p + i * block);
      srcs[d].push_back(src + at[i]);
    }
  }
  auto gather = [&](int d) -> cudaError_t {
    switch (kMethod) {
      case H2D::kFlash: {
        const hgca::Status st = hgca::gpu::flash_h2d(spans[d], {sms, 16384}, s);
        return st ? cudaSuccess : cudaErrorUnknown;
      }
      case H2D::kPerBlock:
        for (std::size_t i = 0; i < count; ++i) {
          if (cudaError_t e = cudaMemcpyAsync(dsts[d][i], srcs[d][i], block, cudaMemcpyHostToDevice, s); e != cudaSuccess) {
            return e;
          }
        }
        return cudaSuccess;
      case H2D::kBatch: return memcpy_batch(dsts[d], srcs[d], sizes, s);
      case H2D::kBatchTuned: return memcpy_batch(dsts[d], srcs[d], sizes, s, batch_calls);
      case H2D::kContiguous: return cudaMemcpyAsync(dst.p, src, kMoveBytes, cudaMemcpyHostToDevice, s);
    }
    return cudaSuccess;
  };
  BENCH_CUDA(gather(0));  // warm-up
  BENCH_CUDA(cudaStreamSynchronize(s));
  Device compute_out(sizeof(float));
  auto compute = [&] { return launch_compute(1, 1 << 17, compute_out.p, s); };
  if (kQueued) {
    float ms = 0;
    BENCH_CUDA(hgca::bench::event_ms(s, start, stop, compute, &ms));
    state.counters["queued_behind_ms"] = ms;
  }
  std::vector<double> seconds, host_seconds;
  int d = 1;
  for (auto _ : state) {
    if (kQueued) BENCH_CUDA(compute());
    float ms = 0;
    BENCH_CUDA(hgca::bench::event_ms(s, start, stop, [&] {
      const auto t0 = std::chrono::steady_clock::now();
      const cudaError_t e = gather(d);
      host_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return e;
    }, &ms));
    state.SetIterationTime(ms / 1e3);
    seconds.push_back(ms / 1e3);
    d = (d + 1) % kDraws;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kMoveBytes));
  state.counters["GBps_median"] = static_cast<double>(kMoveBytes) / median(seconds) / 1e9;
  state.counters["host_ms_median"] = median(host_seconds) * 1e3;
  state.counters["block_KB"] = static_cast<double>(block >> 10);
  state.counters["SMs"] = kMethod == H2D::kFlash ? sms : 0;  // copy engines use none
  if (kThp) state.counters["huge_page_fraction"] = thp_pool().huge_fraction;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
}

/// Arg: spans. The host's time in one flash_h2d call of that many 16 KB spans on 8 SMs, the GPU
/// idle (each call's gather finishes, untimed, before the next call).
void BM_H2DHost(benchmark::State& state) {
  constexpr std::size_t block = 16384;
  const auto n = static_cast<std::size_t>(state.range(0));
  std::byte* src = pool();
  Device dst(n * block);
  if (!src || !dst.p) return state.SkipWithError("out of pinned or device memory");
  cudaStream_t s = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const auto at = scattered_blocks(block, n, 7);
  std::vector<hgca::gpu::H2DSpan> spans;
  for (std::size_t i = 0; i < n; ++i) spans.push_back({src + at[i], dst.p + i * block, static_cast<int64_t>(block)});
  std::vector<double> us;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const hgca::Status st = hgca::gpu::flash_h2d(spans, {8, 16384}, s);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!st) return state.SkipWithError(st.message().c_str());
    state.SetIterationTime(t);
    us.push_back(t * 1e6);
    BENCH_CUDA(cudaStreamSynchronize(s));
  }
  state.counters["host_us_median"] = median(us);
  cudaStreamDestroy(s);
}

// --- D2H -------------------------------------------------------------------------------------

constexpr int32_t kHkv = 8, kD = 128, kSeqs = 32;

/// Store memory over this machine's topology, keeping up to `high_water` spare chunks.
std::shared_ptr<hgca::kvmgr::StoreMemory> make_store_memory(int32_t high_water) {
  std::shared_ptr<const hgca::cpu::Topology> topology;
  std::shared_ptr<hgca::kvmgr::StoreMemory> m;
  hgca::kvmgr::StoreMemoryOptions o;
  o.high_water_chunks = high_water;
  o.writes = hgca::bench::store_writes();
  o.context_first_segment_bytes = hgca::bench::first_segment_bytes();
  if (!hgca::cpu::Topology::from_machine(&topology) || !hgca::kvmgr::StoreMemory::create(topology, o, &m)) {
    std::fprintf(stderr, "bench_transfer: the store memory could not be set up\n");
    std::exit(1);
  }
  return m;
}

/// The stores' memory, as the runtime has it (node-bound chunks, default size; not registered: the
/// benchmark's GPU never reads the stores). `warm`: the chunks an iteration's stores free are kept
/// for the next (up to 4 GiB: 32 layers' host windows, 1 GiB, and a 4-lap run's 1 GB), as a runtime
/// keeps the memory of released sequences within its high-water mark, so the stores are filled in
/// memory that has its pages; cold: the default mark (192 MiB), so most of an iteration's 256 MB
/// lands in fresh chunks, faulted in by the scatter.
std::shared_ptr<hgca::kvmgr::StoreMemory> store_memory(bool warm = true) {
  static const std::shared_ptr<hgca::kvmgr::StoreMemory> warm_memory = make_store_memory(128);
  static const std::shared_ptr<hgca::kvmgr::StoreMemory> cold_memory =
      make_store_memory(hgca::kvmgr::StoreMemoryOptions{}.high_water_chunks);
  return warm ? warm_memory : cold_memory;
}

/// Store memory for stores kept over a whole benchmark (they grow by its 256 MB a lap): 10 GiB of
/// chunks taken and touched up front, then kept spare, so that growing stores take touched memory
/// as long-lived stores reuse the memory of released sequences.
std::shared_ptr<hgca::kvmgr::StoreMemory> steady_store_memory() {
  static const std::shared_ptr<hgca::kvmgr::StoreMemory> memory = [] {
    auto m = make_store_memory(320);
    std::vector<hgca::kvmgr::StoreSpan> spans(640);  // half a chunk each: 10 GiB (a 4-lap run takes 7)
    m->allocate(0, m->options().chunk_bytes / 2, spans);
    for (const auto& span : spans) std::memset(span.data(), 0, span.bytes());
    return m;
  }();
  return memory;
}

constexpr std::size_t kHeadRow = kD * 2;  // bf16
constexpr std::size_t kRow = kHkv * kHeadRow;

/// The eviction workload at one block size: steps of kSeqs sequences each evicting one block, in
/// `laps` passes over the kMoveBytes of device memory (more than one: a sustained run, in which the
/// pipeline's first copy and last scatter, which nothing overlaps, weigh less).
struct D2HWork {
  int32_t block_tokens = 0;
  int64_t lap_steps = 0, steps = 0;
  std::size_t step_bytes = 0;  // of K (V the same): kSeqs × block_tokens rows
  D2HWork(std::size_t block, int64_t laps) : block_tokens(static_cast<int32_t>(block / kHeadRow)) {
    step_bytes = static_cast<std::size_t>(kSeqs) * block_tokens * kRow;
    lap_steps = static_cast<int64_t>(kMoveBytes / (2 * step_bytes));
    steps = laps * lap_steps;
  }
  std::size_t total() const { return 2 * step_bytes * static_cast<std::size_t>(steps); }
  /// Where step t's rows lie in the device buffers (of K, and of V).
  std::size_t source(int64_t t) const { return static_cast<std::size_t>(t % lap_steps) * step_bytes; }
};

/// FlashD2H's pipeline: its stream, its pinned staging slots (2: double-buffered; with more, the
/// next copies run ahead of the scatters) with a copy's start and end events each, and what a run's
/// copies and scatters took, for the counters that say which of the two bounds it.
struct FlashPipe {
  cudaStream_t stream = nullptr;
  std::vector<std::byte*> slots;
  std::vector<cudaEvent_t> began, copied;
  double copy_s = 0.0;
  std::atomic<double> scatter_s{0.0};  // summed over the scatters (lanes may overlap)
  FlashPipe(cudaStream_t s, std::vector<std::byte*> staging) : stream(s), slots(std::move(staging)) {
    began.resize(slots.size());
    copied.resize(slots.size());
    for (std::size_t i = 0; i < slots.size(); ++i) {
      cudaEventCreate(&began[i]);
      cudaEventCreate(&copied[i]);
    }
  }
  FlashPipe(const FlashPipe&) = delete;
  FlashPipe& operator=(const FlashPipe&) = delete;
  ~FlashPipe() {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      cudaEventDestroy(began[i]);
      cudaEventDestroy(copied[i]);
    }
  }
};

/// FlashD2H's pipeline over `w`: step t's K and V rows ([kSeqs × block_tokens, Hkv, D], sequence by
/// sequence, as a step's new rows arrive) are copied into staging slot t % slots and scattered by
/// the pool; the copies of the next steps run while step t is scattered. `scatter(t, k, v)` does the
/// CPU's part, in lane t % `layers` (the runtime's lane of the layer whose call step t is: a
/// layer's scatters run in order, those of different layers side by side); `prepare(t)` runs on
/// the issuing thread as step t's copy is issued (where the CUDA backend's enqueue allocates the
/// blocks its scatter fills).
template <typename Prepare, typename Scatter>
cudaError_t flash_d2h(const D2HWork& w, const std::byte* dev_k, const std::byte* dev_v, FlashPipe& pipe,
                      hgca::cpu::ScatterLanes& lanes, int32_t layers, Prepare&& prepare, Scatter&& scatter) {
  const std::size_t n = pipe.slots.size();
  auto copy = [&](int64_t t) -> cudaError_t {
    prepare(t);
    const std::size_t i = static_cast<std::size_t>(t) % n;
    const std::size_t at = w.source(t);
    if (cudaError_t e = cudaEventRecord(pipe.began[i], pipe.stream); e != cudaSuccess) return e;
    for (int kv = 0; kv < 2; ++kv) {  // the slot holds the step's K rows, then its V rows
      if (cudaError_t e = cudaMemcpyAsync(pipe.slots[i] + kv * w.step_bytes, (kv == 0 ? dev_k : dev_v) + at, w.step_bytes,
                                          cudaMemcpyDeviceToHost, pipe.stream);
          e != cudaSuccess) {
        return e;
      }
    }
    return cudaEventRecord(pipe.copied[i], pipe.stream);
  };
  if (cudaError_t e = copy(0); e != cudaSuccess) return e;
  for (int64_t t = 0; t < w.steps; ++t) {
    if (t + 1 < w.steps) {
      // Slot (t + 1) % n was last read by scatter u = t + 1 − n. It may still run if it is the
      // last one started in its lane; else it finished before its lane's next one started.
      const int64_t u = t + 1 - static_cast<int64_t>(n);
      if (u >= 0 && u >= t - layers) lanes.wait(static_cast<int32_t>(u % layers));
      if (cudaError_t e = copy(t + 1); e != cudaSuccess) return e;
    }
    const std::size_t i = static_cast<std::size_t>(t) % n;
    if (cudaError_t e = cudaEventSynchronize(pipe.copied[i]); e != cudaSuccess) return e;
    float ms = 0.0f;
    if (cudaError_t e = cudaEventElapsedTime(&ms, pipe.began[i], pipe.copied[i]); e != cudaSuccess) return e;
    pipe.copy_s += 1e-3 * ms;
    const std::byte* slot = pipe.slots[i];
    lanes.start(static_cast<int32_t>(t % layers), [&scatter, &pipe, t, slot, &w] {
      const auto t0 = std::chrono::steady_clock::now();
      scatter(t, slot, slot + w.step_bytes);
      pipe.scatter_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  }
  lanes.wait_all();
  return cudaSuccess;
}

enum class D2H { kFlashStore, kFlashStoreCold, kFlashStoreSteady, kFlashStoreSteadyVaried, kFlashPool, kFlashPoolStreaming, kFlashPoolRows, kFlashCopyOnly, kPerBlock, kBatch };

/// Args: block KB; staging slots (flash rows); scatter threads (flash rows; 0: every core); % of the
/// evicted entries selected (store rows; 0 elsewhere); layers (store rows only: scatter lanes).
template <D2H kMethod>
void BM_D2H(benchmark::State& state) {
  const std::size_t block = static_cast<std::size_t>(state.range(0)) << 10;
  const bool steady = kMethod == D2H::kFlashStoreSteady || kMethod == D2H::kFlashStoreSteadyVaried;
  const bool into_stores = kMethod == D2H::kFlashStore || kMethod == D2H::kFlashStoreCold || steady;
  const D2HWork w(block, into_stores ? state.range(5) : 1);
  std::byte* pool_p = pool();
  Device dev_k(w.total() / 2), dev_v(w.total() / 2);
  const auto n_slots = static_cast<std::size_t>(state.range(1));
  std::deque<Pinned> slots;
  for (std::size_t i = 0; i < n_slots; ++i) slots.emplace_back(2 * w.step_bytes);
  const bool staged = std::all_of(slots.begin(), slots.end(), [](const Pinned& p) { return p.p != nullptr; });
  if (!pool_p || !dev_k.p || !dev_v.p || !staged) return state.SkipWithError("out of memory");
  BENCH_CUDA(cudaMemset(dev_k.p, 0x3C, w.total() / 2));
  BENCH_CUDA(cudaMemset(dev_v.p, 0x5A, w.total() / 2));
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (cudaEvent_t* e : {&start, &stop}) BENCH_CUDA(cudaEventCreate(e));
  tbb::task_arena arena(state.range(2) > 0 ? static_cast<int>(state.range(2)) : tbb::task_arena::automatic);
  const auto layers = static_cast<int32_t>(into_stores ? state.range(4) : 1);
  hgca::cpu::ScatterLanes lanes(layers, arena);
  std::vector<std::byte*> staging;
  for (const Pinned& p : slots) staging.push_back(p.p);
  FlashPipe pipe(s, staging);

  // Destinations of the pool and the peers: one scattered pool block per (step, sequence, head, K/V).
  const std::size_t blocks = static_cast<std::size_t>(w.lap_steps) * kSeqs * kHkv * 2;
  const auto at = scattered_blocks(block, blocks, 7);
  auto dest = [&](int64_t t, int32_t seq, int32_t h, int kv) {
    return pool_p + at[((static_cast<std::size_t>(t) * kSeqs + seq) * kHkv + h) * 2 + kv];
  };
  // The peers' sources: the window's layout, (sequence, head) rows contiguous per block.
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<std::size_t> sizes(blocks, block);
  for (int64_t t = 0; t < w.lap_steps; ++t) {
    for (int32_t seq = 0; seq < kSeqs; ++seq) {
      for (int32_t h = 0; h < kHkv; ++h) {
        for (int kv = 0; kv < 2; ++kv) {
          const std::size_t src_at = static_cast<std::size_t>(t) * w.step_bytes + (static_cast<std::size_t>(seq) * kHkv + h) * block;
          srcs.push_back((kv == 0 ? dev_k.p : dev_v.p) + src_at);
          dsts.push_back(dest(t, seq, h, kv));
        }
      }
    }
  }

  // FlashD2H into the stores: kSeqs sequences whose windows (4 blocks) are full, so that every
  // step's new block pushes their oldest block out to the store, selected with beta = 1: the
  // evicted MAW is uniform on [0, hi], hi set so that selected_pct % of it passes beta / n_ref.
  const hgca::kvmgr::SelectionParams sel{1.0f, 4, 1};
  const float threshold = 1.0f / (5.0f * static_cast<float>(w.block_tokens));  // n_ref: window + new rows
  const float pass = state.range(3) > 0 ? static_cast<float>(state.range(3)) / 100.0f : 0.5f;
  // "_varied": every (sequence, step) evicts its own draw (one of 61), as sequences attend
  // differently; otherwise all evict the same MAW, and their context sets grow in lock step.
  const std::size_t maw_draws = kMethod == D2H::kFlashStoreSteadyVaried ? 61 : 1;
  const std::size_t maw_size = static_cast<std::size_t>(kHkv) * w.block_tokens;
  std::vector<float> maw(maw_draws * maw_size);
  std::mt19937 rng(3);
  for (float& m : maw) m = std::uniform_real_distribution<float>(0.0f, threshold / (1.0f - pass))(rng);
  auto evicted_maw = [&](int64_t t, int32_t i) {
    return maw.data() + static_cast<std::size_t>(t * kSeqs + i) % maw_draws * maw_size;
  };
  std::vector<std::unique_ptr<hgca::kvmgr::MirroredKv>> seqs;  // layer l's sequence i at l · kSeqs + i
  const std::vector<std::byte> prompt(static_cast<std::size_t>(4 * w.block_tokens) * kRow, std::byte{1});
  auto fresh_stores = [&] {
    seqs.clear();
    for (int32_t i = 0; i < layers * kSeqs; ++i) {
      seqs.push_back(std::make_unique<hgca::kvmgr::MirroredKv>(4 * w.block_tokens, w.block_tokens, kHkv, kD, 2,
                                                               steady ? steady_store_memory()
                                                               : store_memory(kMethod != D2H::kFlashStoreCold), 0));
      seqs.back()->evict_and_insert(prompt.data(), prompt.data(), 4 * w.block_tokens, nullptr, sel);
    }
  };
  // Each step's blocks, allocated when its copy is issued (the windows are full: each step's new
  // block lands after 4 blocks), as the CUDA backend's enqueue allocates them.
  std::vector<std::vector<hgca::kvmgr::DramStore::PreparedAppend>> fresh(static_cast<std::size_t>(w.steps));
  auto layer_seqs = [&](int64_t t) { return seqs.begin() + t % layers * kSeqs; };  // step t's layer's
  auto allocate = [&](int64_t t) {
    fresh[t].clear();
    for (int32_t i = 0; i < kSeqs; ++i) fresh[t].push_back(layer_seqs(t)[i]->allocate_blocks(4 * w.block_tokens, w.block_tokens));
  };
  auto to_store = [&](int64_t t, const std::byte* k, const std::byte* v) {
    tbb::parallel_for(0, kSeqs, [&](int32_t i) {
      const std::size_t row = static_cast<std::size_t>(i) * w.block_tokens * kRow;
      layer_seqs(t)[i]->evict_and_insert(k + row, v + row, w.block_tokens, evicted_maw(t, i), sel, std::move(fresh[t][i]));
    });
  };
  // The same copies in runs of 16 staged rows, each read front to back into every head's block.
  auto to_pool_rows = [&](int64_t t, const std::byte* k, const std::byte* v) {
    constexpr int32_t kRun = 16;
    const int32_t runs = (w.block_tokens + kRun - 1) / kRun;
    tbb::parallel_for(0, kSeqs * 2 * runs, [&](int32_t task) {
      const int32_t seq = task / (2 * runs), kv = task / runs % 2, r0 = task % runs * kRun;
      const std::byte* rows = (kv == 0 ? k : v) + (static_cast<std::size_t>(seq) * w.block_tokens + r0) * kRow;
      for (int32_t r = 0; r < std::min(kRun, w.block_tokens - r0); ++r) {
        for (int32_t h = 0; h < kHkv; ++h) {
          std::memcpy(dest(t, seq, h, kv) + (r0 + r) * kHeadRow, rows + r * kRow + h * kHeadRow, kHeadRow);
        }
      }
    });
  };
  auto to_pool = [&](int64_t t, const std::byte* k, const std::byte* v) {
    tbb::parallel_for(0, kSeqs * kHkv * 2, [&](int32_t task) {
      const int32_t seq = task / (2 * kHkv), h = task / 2 % kHkv, kv = task % 2;
      const std::byte* rows = (kv == 0 ? k : v) + static_cast<std::size_t>(seq) * w.block_tokens * kRow + h * kHeadRow;
      hgca::bench::gather_block(dest(t, seq, h, kv), rows, w.block_tokens, kHeadRow, kRow,
                                kMethod == D2H::kFlashPoolStreaming);
    });
  };

  auto nothing = [](int64_t) {};
  auto run = [&]() -> cudaError_t {
    switch (kMethod) {
      case D2H::kFlashStore:
      case D2H::kFlashStoreCold:
      case D2H::kFlashStoreSteady:
      case D2H::kFlashStoreSteadyVaried: return flash_d2h(w, dev_k.p, dev_v.p, pipe, lanes, layers, allocate, to_store);
      case D2H::kFlashPool:
      case D2H::kFlashPoolStreaming: return flash_d2h(w, dev_k.p, dev_v.p, pipe, lanes, 1, nothing, to_pool);
      case D2H::kFlashPoolRows: return flash_d2h(w, dev_k.p, dev_v.p, pipe, lanes, 1, nothing, to_pool_rows);
      case D2H::kFlashCopyOnly: return flash_d2h(w, dev_k.p, dev_v.p, pipe, lanes, 1, nothing, [](int64_t, const std::byte*, const std::byte*) {});
      case D2H::kPerBlock:
        for (std::size_t i = 0; i < blocks; ++i) {
          if (cudaError_t e = cudaMemcpyAsync(dsts[i], srcs[i], block, cudaMemcpyDeviceToHost, s); e != cudaSuccess) return e;
        }
        return cudaSuccess;
      case D2H::kBatch: return memcpy_batch(dsts, srcs, sizes, s);
    }
    return cudaSuccess;
  };
  const bool flash = kMethod != D2H::kPerBlock && kMethod != D2H::kBatch;
  if (into_stores) fresh_stores();
  BENCH_CUDA(run());  // warm-up
  BENCH_CUDA(cudaStreamSynchronize(s));
  std::vector<double> seconds;
  pipe.copy_s = 0.0;
  pipe.scatter_s = 0.0;
  const hgca::kvmgr::StoreMemory* memory = into_stores ? &seqs.front()->dram().memory() : nullptr;
  const hgca::StoreMemoryStats grown_before = memory ? memory->stats(0) : hgca::StoreMemoryStats{};
  for (auto _ : state) {
    // The stores would grow by 256 MB a run (kept by flash_store_steady, which has the memory).
    if (into_stores && !steady) fresh_stores();
    double sec = 0.0;
    if (flash) {  // end to end, CPU work included: wall clock
      const auto t0 = std::chrono::steady_clock::now();
      BENCH_CUDA(run());
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      float ms = 0;
      BENCH_CUDA(hgca::bench::event_ms(s, start, stop, run, &ms));
      sec = ms / 1e3;
    }
    state.SetIterationTime(sec);
    seconds.push_back(sec);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * w.total()));
  state.counters["GBps_median"] = static_cast<double>(w.total()) / median(seconds) / 1e9;
  state.counters["block_KB"] = static_cast<double>(block >> 10);
  state.counters["threads"] = arena.max_concurrency();
  if (into_stores) {
    state.counters["selected_fraction"] = hgca::bench::selected_fraction(seqs);  // of the last run
    // Whether the stores streamed their rows at the end of the last run (StoreWrites::kAuto decides
    // by the store memory in use: what the run's stores and windows hold).
    state.counters["rows_streamed"] = memory->streams_rows() ? 1 : 0;
    // Node 0's chunks of store memory taken from the OS (by an allocation itself, or ahead of it
    // by the background thread) and given back, per timed run: fresh pages the scatter faults in.
    const hgca::StoreMemoryStats grown = memory->stats(0);
    const auto per_run = [&](int64_t after, int64_t before) {
      return static_cast<double>(after - before) / static_cast<double>(state.iterations());
    };
    state.counters["sync_growths"] = per_run(grown.sync_growths, grown_before.sync_growths);
    state.counters["background_growths"] = per_run(grown.background_growths, grown_before.background_growths);
    state.counters["released_chunks"] = per_run(grown.released_chunks, grown_before.released_chunks);
  }
  if (flash) {
    // Each part's own rate over the timed runs: the pipeline reaches the lower one at best.
    const double bytes = static_cast<double>(w.total()) * static_cast<double>(state.iterations());
    state.counters["copy_GBps"] = bytes / pipe.copy_s / 1e9;
    state.counters["scatter_GBps"] = bytes / pipe.scatter_s / 1e9;
  }
  seqs.clear();
  cudaStreamDestroy(s);
  for (cudaEvent_t e : {start, stop}) cudaEventDestroy(e);
}

/// The link's rate for one contiguous device-to-host copy into pinned memory by its size (MiB; K and
/// V of a D2H step at 4, 16, 64 KB blocks are 1, 4 and 16 MiB copies). CUDA events, median of 20.
void BM_D2HContiguous(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  Device src(bytes);
  Pinned dst(bytes);
  if (!src.p || !dst.p) return state.SkipWithError("out of memory");
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (cudaEvent_t* e : {&start, &stop}) BENCH_CUDA(cudaEventCreate(e));
  auto copy = [&] { return cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToHost, s); };
  BENCH_CUDA(copy());
  BENCH_CUDA(cudaStreamSynchronize(s));
  std::vector<double> seconds;
  for (auto _ : state) {
    float ms = 0;
    BENCH_CUDA(hgca::bench::event_ms(s, start, stop, copy, &ms));
    state.SetIterationTime(ms / 1e3);
    seconds.push_back(ms / 1e3);
  }
  state.counters["GBps_median"] = static_cast<double>(bytes) / median(seconds) / 1e9;
  cudaStreamDestroy(s);
  for (cudaEvent_t e : {start, stop}) cudaEventDestroy(e);
}

// --- Interference ------------------------------------------------------------------------------

enum class Beside { kNothing, kFlashD2H, kSmCopy };

/// The compute kernel's time alone and with a transfer running beside it (on another stream,
/// restarted until the kernel's repetitions are done; timing starts once it is moving). Counters:
/// kernel ms (median) and the transfer's GB/s meanwhile, counted step by step (session 45's rows
/// counted whole laps into fresh stores, none of which ended within the kernel's runs: 0 GB/s).
template <Beside kBeside>
void BM_ComputeBeside(benchmark::State& state) {
  const D2HWork w(16 << 10, 1);
  Device dev_k(w.total() / 2), dev_v(w.total() / 2), out(4);
  Pinned slot0(2 * w.step_bytes), slot1(2 * w.step_bytes), sink(w.total() / 2);
  if (!dev_k.p || !dev_v.p || !slot0.p || !slot1.p || !sink.p) return state.SkipWithError("out of memory");
  cudaStream_t s = nullptr, t = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BENCH_CUDA(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr, stop = nullptr;
  for (cudaEvent_t* e : {&start, &stop}) BENCH_CUDA(cudaEventCreate(e));
  auto release = [&] {
    cudaStreamSynchronize(t);
    cudaStreamDestroy(s);
    cudaStreamDestroy(t);
    for (cudaEvent_t e : {start, stop}) cudaEventDestroy(e);
  };
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto kernel = [&] { return launch_compute(sms * 4, 1 << 18, out.p, s); };

  std::atomic<bool> stop_beside{false};
  std::atomic<int64_t> moved{0};
  std::thread beside;
  tbb::task_arena arena;
  hgca::cpu::ScatterLanes lanes(1, arena);
  FlashPipe pipe(t, {slot0.p, slot1.p});
  std::vector<std::unique_ptr<hgca::kvmgr::MirroredKv>> seqs;
  const hgca::kvmgr::SelectionParams sel{1.0f, 4, 1};
  std::vector<float> maw(static_cast<std::size_t>(kHkv) * w.block_tokens, 1e-3f);
  if (kBeside != Beside::kNothing) {
    beside = std::thread([&] {
      while (!stop_beside.load()) {
        if (kBeside == Beside::kFlashD2H) {
          seqs.clear();  // stores in memory already faulted in: the lap is FlashD2H's work, not the kernel's page faults
          for (int32_t i = 0; i < kSeqs; ++i) seqs.push_back(std::make_unique<hgca::kvmgr::MirroredKv>(
                                                 4 * w.block_tokens, w.block_tokens, kHkv, kD, 2, steady_store_memory(), 0));
          (void)flash_d2h(w, dev_k.p, dev_v.p, pipe, lanes, 1, [](int64_t) {}, [&](int64_t, const std::byte* k, const std::byte* v) {
            tbb::parallel_for(0, kSeqs, [&](int32_t i) {
              const std::size_t row = static_cast<std::size_t>(i) * w.block_tokens * kRow;
              seqs[i]->evict_and_insert(k + row, v + row, w.block_tokens, maw.data(), sel);
            });
            moved += static_cast<int64_t>(2 * w.step_bytes);
          });
        } else {
          (void)launch_sm_copy(8, dev_k.p, sink.p, w.total() / 2, t);
          cudaStreamSynchronize(t);
          moved += static_cast<int64_t>(w.total() / 2);
        }
      }
    });
    // Timing starts once the transfer moves (up to 30 s for the first stores' memory).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (moved.load() < static_cast<int64_t>(w.total()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (moved.load() == 0) {
      stop_beside = true;
      beside.join();
      release();
      return state.SkipWithError("the transfer beside the kernel did not move in 30 s");
    }
  }
  BENCH_CUDA(kernel());  // warm-up
  BENCH_CUDA(cudaStreamSynchronize(s));
  std::vector<double> ms_each;
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t moved0 = moved.load();
  for (auto _ : state) {
    float ms = 0;
    BENCH_CUDA(hgca::bench::event_ms(s, start, stop, kernel, &ms));
    state.SetIterationTime(ms / 1e3);
    ms_each.push_back(ms);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t moved_during = moved.load() - moved0;
  stop_beside = true;
  if (beside.joinable()) beside.join();
  state.counters["kernel_ms_median"] = median(ms_each);
  state.counters["beside_GBps"] = static_cast<double>(moved_during) / wall / 1e9;
  release();
}

}  // namespace

BENCHMARK(BM_H2D<H2D::kFlash>)->Name("BM_H2D/flash")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {2, 4, 8}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(12);
BENCHMARK(BM_H2D<H2D::kBatch>)->Name("BM_H2D/memcpy_batch")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_H2D<H2D::kBatchTuned>)->Name("BM_H2D/memcpy_batch_tuned")->ArgNames({"block_KB", "SMs", "per_call", "attrs"})
    ->ArgsProduct({{16}, {0}, {256, 1024, 4096}, {0, 1, 2}})->Args({4, 0, 1024, 2})->Args({64, 0, 1024, 2})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(12);
BENCHMARK(BM_H2D<H2D::kContiguous>)->Name("BM_H2D/memcpy_contiguous")->ArgNames({"block_KB", "SMs"})
    ->Args({16, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_H2D<H2D::kPerBlock>)->Name("BM_H2D/memcpy_per_block")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(4);
BENCHMARK(BM_H2D<H2D::kFlash, false, true>)->Name("BM_H2D/flash_queued")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {2, 4, 8}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(12);
BENCHMARK(BM_H2D<H2D::kBatch, false, true>)->Name("BM_H2D/memcpy_batch_queued")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_H2D<H2D::kContiguous, false, true>)->Name("BM_H2D/memcpy_contiguous_queued")->ArgNames({"block_KB", "SMs"})
    ->Args({16, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_H2DHost)->ArgName("spans")->Arg(1)->Arg(64)->Arg(65)->Arg(1360)->Arg(16384)->UseManualTime()
    ->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_H2D<H2D::kFlash, true>)->Name("BM_H2D/flash_thp")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{4, 16, 64}, {8}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(12);
BENCHMARK(BM_H2D<H2D::kBatch, true>)->Name("BM_H2D/memcpy_batch_thp")->ArgNames({"block_KB", "SMs"})
    ->ArgsProduct({{16}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
// The store rows' last argument: laps over the device buffers (D2HWork): 1 = 256 MB per iteration,
// 4 = 1 GB, the sustained rate.
BENCHMARK(BM_D2H<D2H::kFlashStore>)->Name("BM_D2H/flash_store")->ArgNames({"block_KB", "slots", "threads", "selected_pct", "layers", "laps"})
    ->ArgsProduct({{4, 16, 64}, {2, 3, 4}, {0}, {50, 10, 1}, {1, 2}, {1}})->Args({16, 4, 0, 10, 1, 4})->Args({16, 4, 0, 10, 2, 4})
    ->Args({16, 8, 0, 10, 4, 4})->Args({16, 9, 0, 10, 8, 4})->Args({16, 16, 0, 10, 8, 4})->Args({16, 8, 0, 10, 16, 4})
    ->Args({16, 16, 0, 10, 16, 4})->Args({16, 8, 0, 10, 32, 4})->Args({16, 16, 0, 10, 32, 4})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashStoreSteady>)->Name("BM_D2H/flash_store_steady")->ArgNames({"block_KB", "slots", "threads", "selected_pct", "layers", "laps"})
    ->ArgsProduct({{16, 64}, {4}, {0}, {50, 10}, {1}, {1, 4}})->Args({16, 4, 0, 10, 2, 4})->Args({16, 8, 0, 10, 4, 4})->Args({16, 9, 0, 10, 8, 4})->Args({16, 16, 0, 10, 8, 4})
    ->Args({16, 8, 0, 10, 16, 4})->Args({16, 16, 0, 10, 16, 4})->Args({16, 8, 0, 10, 32, 4})->Args({16, 16, 0, 10, 32, 4})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashStoreSteadyVaried>)->Name("BM_D2H/flash_store_steady_varied")->ArgNames({"block_KB", "slots", "threads", "selected_pct", "layers", "laps"})
    ->Args({16, 4, 0, 10, 1, 4})->Args({16, 8, 0, 10, 4, 4})->Args({16, 9, 0, 10, 8, 4})->Args({16, 16, 0, 10, 8, 4})
    ->Args({16, 8, 0, 10, 16, 4})->Args({16, 16, 0, 10, 16, 4})->Args({16, 8, 0, 10, 32, 4})->Args({16, 16, 0, 10, 32, 4})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashStoreCold>)->Name("BM_D2H/flash_store_cold")->ArgNames({"block_KB", "slots", "threads", "selected_pct", "layers", "laps"})
    ->ArgsProduct({{4, 16, 64}, {2, 3}, {0}, {50}, {1}, {1}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashPool>)->Name("BM_D2H/flash_pool")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})->ArgsProduct({{4, 16, 64}, {2, 3, 4}, {0}, {0}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashPoolStreaming>)->Name("BM_D2H/flash_pool_streaming")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})->ArgsProduct({{4, 16, 64}, {2, 3}, {0}, {0}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashPool>)->Name("BM_D2H/flash_pool_tuning")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})
    ->ArgsProduct({{16}, {2, 3, 4}, {4, 8, 12}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashPoolRows>)->Name("BM_D2H/flash_pool_rows")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})
    ->ArgsProduct({{4, 16, 64}, {2, 3, 4}, {0}, {0}})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kFlashCopyOnly>)->Name("BM_D2H/flash_copy_only")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})->ArgsProduct({{4, 16, 64}, {2, 3}, {0}, {0}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2HContiguous)->ArgName("MiB")->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(64)->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_D2H<D2H::kBatch>)->Name("BM_D2H/memcpy_batch")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})->ArgsProduct({{4, 16, 64}, {0}, {0}, {0}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(6);
BENCHMARK(BM_D2H<D2H::kPerBlock>)->Name("BM_D2H/memcpy_per_block")->ArgNames({"block_KB", "slots", "threads", "selected_pct"})->ArgsProduct({{4, 16, 64}, {0}, {0}, {0}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(4);
BENCHMARK(BM_ComputeBeside<Beside::kNothing>)->Name("BM_Compute/alone")->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(15);
BENCHMARK(BM_ComputeBeside<Beside::kFlashD2H>)->Name("BM_Compute/beside_flash_d2h")->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(15);
BENCHMARK(BM_ComputeBeside<Beside::kSmCopy>)->Name("BM_Compute/beside_sm_copy")->UseManualTime()
    ->Unit(benchmark::kMillisecond)->Iterations(15);

BENCHMARK_MAIN();
