// Store memory: the rate at which the DRAM store gets its blocks (allocate and fill, as an append
// does) from the chunked allocator against the std::vector blocks it replaced, in the same run; and,
// with a GPU, what registering one chunk with CUDA costs per chunk size (16 MiB … 1 GiB), against
// cudaHostAlloc of the same size, which is what justifies the default chunk size.
// FlashD2H's CPU side alone: staged rows scattered into host windows and stores
// (MirroredKv::evict_and_insert) at hgca_bench_transfer's D2H shapes, against the same rows
// scattered into pre-faulted blocks of a pool (its flash_pool), so that the scatter is profiled
// without a GPU ("store_allocated_ahead": the new rows' blocks allocated before the timed steps, as
// the CUDA backend allocates them when it enqueues; "store_own_memory": an allocator per sequence).
//
// Block shape: K and V of block_tokens × head_dim elements each; the argument is the bytes of K
// (16 KiB = 64 tokens × D 128 × bf16, the default geometry).
#include <benchmark/benchmark.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "cpu/pool.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"
#include "scatter_block.hpp"

#ifdef HGCA_BENCH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using hgca::kvmgr::StoreBlock;
using hgca::kvmgr::StoreMemory;

constexpr int kBlocksPerBatch = 256;  // an append of a long prefill's evicted blocks, per batch

std::shared_ptr<const hgca::cpu::Topology> machine() {
  static const auto topology = [] {
    std::shared_ptr<const hgca::cpu::Topology> t;
    if (!hgca::cpu::Topology::from_machine(&t)) std::abort();
    return t;
  }();
  return topology;
}

/// One allocator for every thread of a run, as a runtime has (default options: 32 MiB chunks).
std::shared_ptr<StoreMemory> shared_memory() {
  static const auto memory = [] {
    std::shared_ptr<StoreMemory> m;
    if (!StoreMemory::create(machine(), {}, &m)) std::abort();
    return m;
  }();
  return memory;
}

/// The source rows an append copies from.
const std::vector<std::byte>& source(std::size_t bytes) {
  static thread_local std::vector<std::byte> src;
  if (src.size() < bytes) src.assign(bytes, std::byte{0x3C});
  return src;
}

/// An allocator of the calling thread's own (what the shared one's locking costs, by comparison).
std::shared_ptr<StoreMemory> own_memory() {
  static thread_local const auto memory = [] {
    std::shared_ptr<StoreMemory> m;
    if (!StoreMemory::create(machine(), {}, &m)) std::abort();
    return m;
  }();
  return memory;
}

/// Args: K bytes per block; 1: every thread its own allocator (0: one for all, as in a runtime).
void BM_BlocksFromStoreMemory(benchmark::State& state) {
  const auto kv_bytes = static_cast<std::size_t>(state.range(0));
  auto memory = state.range(1) != 0 ? own_memory() : shared_memory();
  const std::size_t v_offset = (kv_bytes + StoreMemory::kAlignment - 1) / StoreMemory::kAlignment * StoreMemory::kAlignment;
  const auto& src = source(kv_bytes);
  std::vector<std::shared_ptr<const StoreBlock>> blocks;
  blocks.reserve(kBlocksPerBatch);
  for (auto _ : state) {
    for (int b = 0; b < kBlocksPerBatch; ++b) {
      auto block = std::make_shared<StoreBlock>();
      block->memory = memory->allocate(0, 2 * v_offset);
      block->v_offset = v_offset;
      std::memcpy(block->memory.data(), src.data(), kv_bytes);
      std::memcpy(block->memory.data() + v_offset, src.data(), kv_bytes);
      blocks.push_back(std::move(block));
    }
    blocks.clear();
  }
  state.SetItemsProcessed(state.iterations() * kBlocksPerBatch);
  state.SetBytesProcessed(state.iterations() * kBlocksPerBatch * 2 * static_cast<int64_t>(kv_bytes));
  if (state.thread_index() == 0) {
    const hgca::StoreMemoryStats st = memory->stats(0);
    state.counters["chunks"] = static_cast<double>(st.chunks);
    state.counters["sync_growths"] = static_cast<double>(st.sync_growths);
  }
}

/// The peer: the StoreBlock that std::vector held before (zero-filled by resize, then written).
struct VectorBlock {
  std::vector<std::byte> k, v;
};

void BM_BlocksFromVectors(benchmark::State& state) {
  const auto kv_bytes = static_cast<std::size_t>(state.range(0));
  const auto& src = source(kv_bytes);
  std::vector<std::shared_ptr<const VectorBlock>> blocks;
  blocks.reserve(kBlocksPerBatch);
  for (auto _ : state) {
    for (int b = 0; b < kBlocksPerBatch; ++b) {
      auto block = std::make_shared<VectorBlock>();
      block->k.resize(kv_bytes);
      block->v.resize(kv_bytes);
      std::memcpy(block->k.data(), src.data(), kv_bytes);
      std::memcpy(block->v.data(), src.data(), kv_bytes);
      blocks.push_back(std::move(block));
    }
    blocks.clear();
  }
  state.SetItemsProcessed(state.iterations() * kBlocksPerBatch);
  state.SetBytesProcessed(state.iterations() * kBlocksPerBatch * 2 * static_cast<int64_t>(kv_bytes));
}

BENCHMARK(BM_BlocksFromStoreMemory)->ArgsProduct({{4 << 10, 16 << 10, 64 << 10}, {0, 1}})->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(BM_BlocksFromVectors)->Arg(4 << 10)->Arg(16 << 10)->Arg(64 << 10)->ThreadRange(1, 16)->UseRealTime();

// --- FlashD2H's scatter ----------------------------------------------------------------------

/// Store memory that keeps the chunks an iteration frees for the next (as hgca_bench_transfer's
/// flash_store), so that the scatter, not the OS's page faults, is measured.
/// `i` > 0: the i-th of allocators that each serve one sequence only (what the shared one's
/// contention costs the scatter, by comparison).
std::shared_ptr<StoreMemory> scatter_memory(int i = 0) {
  static std::vector<std::shared_ptr<StoreMemory>> memories;
  if (memories.size() <= static_cast<std::size_t>(i)) memories.resize(static_cast<std::size_t>(i) + 1);
  if (!memories[i]) {
    hgca::kvmgr::StoreMemoryOptions o;
    o.high_water_chunks = 64;
    o.writes = hgca::bench::store_writes();
    o.context_first_segment_bytes = hgca::bench::first_segment_bytes();
    if (!StoreMemory::create(machine(), o, &memories[i])) std::abort();
  }
  return memories[i];
}

constexpr int32_t kHkv = 8, kD = 128, kSeqs = 32;
constexpr std::size_t kHeadRow = kD * 2;  // bf16
constexpr std::size_t kRow = kHkv * kHeadRow;
constexpr int kSteps = 8;  // per iteration: each step, every sequence evicts one block

/// kPoolDram: the pool's scatter into 1 GiB of blocks, another part of them each iteration, so that
/// its destinations are not in the L3 (300 MiB on the GPU machine) as kPool's 64 MB at 16 KB are; a
/// growing store writes into memory as cold as this.
enum class Scatter { kStore, kStoreAhead, kStoreOwnMemory, kPool, kPoolStreaming, kPoolDram };

/// Args: block KB (of one KV head's K), threads, and for the stores the selected share in % (the
/// evicted MAW uniform on [0, hi], hi set so that this share passes beta / n_ref). GB/s of evicted
/// K and V.
template <Scatter kInto>
void BM_Scatter(benchmark::State& state) {
  const std::size_t block = static_cast<std::size_t>(state.range(0)) << 10;
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(state.range(1)));
  const auto block_tokens = static_cast<int32_t>(block / kHeadRow);
  const std::size_t step_bytes = static_cast<std::size_t>(kSeqs) * block_tokens * kRow;  // of K
  std::vector<std::byte> staging(2 * step_bytes);
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i + 8 <= staging.size(); i += 8) {
    const uint64_t x = rng();
    std::memcpy(staging.data() + i, &x, 8);
  }
  const bool into_store = kInto != Scatter::kPool && kInto != Scatter::kPoolStreaming && kInto != Scatter::kPoolDram;
  const hgca::kvmgr::SelectionParams sel{1.0f, 4, 1};
  const float threshold = 1.0f / (5.0f * static_cast<float>(block_tokens));  // n_ref: window + new rows
  const float pass = into_store ? static_cast<float>(state.range(2)) / 100.0f : 0.5f;
  std::vector<float> maw(static_cast<std::size_t>(kHkv) * block_tokens);
  for (float& m : maw) m = std::uniform_real_distribution<float>(0.0f, threshold / (1.0f - pass))(rng);
  const std::size_t pool_blocks = static_cast<std::size_t>(kSteps) * kSeqs * kHkv * 2;
  const std::size_t regions = kInto == Scatter::kPoolDram ? std::max<std::size_t>(2, (std::size_t{1} << 30) / (pool_blocks * block)) : 1;
  std::vector<std::byte> pool(into_store ? 0 : regions * pool_blocks * block, std::byte{1});  // touched
  std::size_t region = 0;

  std::vector<std::unique_ptr<hgca::kvmgr::MirroredKv>> seqs;
  std::vector<hgca::kvmgr::DramStore::PreparedAppend> ahead;  // [step][sequence]
  const std::vector<std::byte> prompt(static_cast<std::size_t>(4 * block_tokens) * kRow, std::byte{1});
  for (auto _ : state) {
    state.PauseTiming();
    ahead.clear();
    seqs.clear();
    for (int32_t i = 0; into_store && i < kSeqs; ++i) {
      seqs.push_back(std::make_unique<hgca::kvmgr::MirroredKv>(4 * block_tokens, block_tokens, kHkv, kD, 2,
                                                               scatter_memory(kInto == Scatter::kStoreOwnMemory ? 1 + i : 0), 0));
      seqs.back()->evict_and_insert(prompt.data(), prompt.data(), 4 * block_tokens, nullptr, sel);
    }
    for (int step = 0; kInto == Scatter::kStoreAhead && step < kSteps; ++step) {
      for (const auto& seq : seqs) ahead.push_back(seq->allocate_blocks(4 * block_tokens, block_tokens));
    }
    state.ResumeTiming();
    for (int step = 0; step < kSteps; ++step) {
      const std::byte* k = staging.data();
      const std::byte* v = k + step_bytes;
      if (into_store) {
        tbb::parallel_for(0, kSeqs, [&](int32_t i) {
          const std::size_t row = static_cast<std::size_t>(i) * block_tokens * kRow;
          seqs[i]->evict_and_insert(k + row, v + row, block_tokens, maw.data(), sel,
                                    ahead.empty() ? hgca::kvmgr::DramStore::PreparedAppend{} : std::move(ahead[step * kSeqs + i]));
        });
      } else {
        tbb::parallel_for(0, kSeqs * kHkv * 2, [&](int32_t task) {
          const int32_t seq = task / (2 * kHkv), h = task / 2 % kHkv, kv = task % 2;
          const std::byte* rows = (kv == 0 ? k : v) + static_cast<std::size_t>(seq) * block_tokens * kRow + h * kHeadRow;
          std::byte* out = pool.data() + (region * pool_blocks + (static_cast<std::size_t>(step) * kSeqs + seq) * kHkv * 2 + h * 2 + kv) * block;
          hgca::bench::gather_block(out, rows, block_tokens, kHeadRow, kRow, kInto == Scatter::kPoolStreaming);
        });
      }
    }
    region = (region + 1) % regions;
  }
  state.SetBytesProcessed(state.iterations() * kSteps * 2 * static_cast<int64_t>(step_bytes));
  if (into_store) state.counters["selected_fraction"] = hgca::bench::selected_fraction(seqs);  // of the last iteration
  seqs.clear();
}

BENCHMARK(BM_Scatter<Scatter::kStore>)->Name("BM_Scatter/store")->ArgNames({"block_KB", "threads", "selected_pct"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}, {50, 10, 1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scatter<Scatter::kStoreAhead>)->Name("BM_Scatter/store_allocated_ahead")->ArgNames({"block_KB", "threads", "selected_pct"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}, {50, 10, 1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scatter<Scatter::kStoreOwnMemory>)->Name("BM_Scatter/store_own_memory")->ArgNames({"block_KB", "threads", "selected_pct"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}, {50, 10, 1}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scatter<Scatter::kPool>)->Name("BM_Scatter/pool")->ArgNames({"block_KB", "threads"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scatter<Scatter::kPoolStreaming>)->Name("BM_Scatter/pool_streaming")->ArgNames({"block_KB", "threads"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scatter<Scatter::kPoolDram>)->Name("BM_Scatter/pool_dram")->ArgNames({"block_KB", "threads"})
    ->ArgsProduct({{4, 16, 64}, {1, 2, 4, 8, 16}})->UseRealTime()->Unit(benchmark::kMillisecond);

#ifdef HGCA_BENCH_CUDA
/// Host-blocking CUDA calls: timed by the wall clock around the call (no GPU work to time by events).
double seconds_of(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool have_gpu(benchmark::State& state) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    state.SkipWithError("no CUDA device");
    return false;
  }
  return true;
}

/// One chunk as the store memory's background thread makes it: fresh node-bound pages (touched
/// first when range(1) = 1, to separate pinning from faulting pages in), registered mapped and portable.
void BM_ChunkRegister(benchmark::State& state) {
  if (!have_gpu(state)) return;
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  const bool touched = state.range(1) != 0;
  double unregister_s = 0;
  for (auto _ : state) {
    void* p = hgca::cpu::node_alloc(*machine(), 0, bytes);
    if (!p) {
      state.SkipWithError("node_alloc failed");
      return;
    }
    if (touched) std::memset(p, 0, bytes);
    cudaError_t e = cudaSuccess;
    state.SetIterationTime(seconds_of([&] { e = cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable); }));
    if (e != cudaSuccess) {
      cudaGetLastError();
      hgca::cpu::node_free(p, bytes);
      state.SkipWithError(cudaGetErrorString(e));
      return;
    }
    unregister_s += seconds_of([&] { cudaHostUnregister(p); });
    hgca::cpu::node_free(p, bytes);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["unregister_ms"] = 1e3 * unregister_s / static_cast<double>(state.iterations());
}

/// The peer: the same bytes from cudaHostAlloc (pinned, mapped, portable), freed with cudaFreeHost.
void BM_ChunkHostAlloc(benchmark::State& state) {
  if (!have_gpu(state)) return;
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  double free_s = 0;
  for (auto _ : state) {
    void* p = nullptr;
    cudaError_t e = cudaSuccess;
    state.SetIterationTime(seconds_of([&] { e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable); }));
    if (e != cudaSuccess) {
      cudaGetLastError();
      state.SkipWithError(cudaGetErrorString(e));
      return;
    }
    free_s += seconds_of([&] { cudaFreeHost(p); });
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["free_ms"] = 1e3 * free_s / static_cast<double>(state.iterations());
}

void chunk_sizes(benchmark::internal::Benchmark* b, bool with_touched) {
  for (int mib : {16, 32, 64, 128, 256, 512, 1024}) {
    b->Args({mib, 0});
    if (with_touched) b->Args({mib, 1});
  }
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
}

BENCHMARK(BM_ChunkRegister)->Apply([](auto* b) { chunk_sizes(b, true); });
BENCHMARK(BM_ChunkHostAlloc)->Apply([](auto* b) { chunk_sizes(b, false); });
#endif

}  // namespace

BENCHMARK_MAIN();
