// Store memory: the rate at which the DRAM store gets its blocks (allocate and fill, as an append
// does) from the chunked allocator against the std::vector blocks it replaced, in the same run; and,
// with a GPU, what registering one chunk with CUDA costs per chunk size (16 MiB … 1 GiB), against
// cudaHostAlloc of the same size, which is what justifies the default chunk size.
//
// Block shape: K and V of block_tokens × head_dim elements each; the argument is the bytes of K
// (16 KiB = 64 tokens × D 128 × bf16, the default geometry).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu/pool.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"

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

void BM_BlocksFromStoreMemory(benchmark::State& state) {
  const auto kv_bytes = static_cast<std::size_t>(state.range(0));
  auto memory = shared_memory();
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

BENCHMARK(BM_BlocksFromStoreMemory)->Arg(4 << 10)->Arg(16 << 10)->Arg(64 << 10)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(BM_BlocksFromVectors)->Arg(4 << 10)->Arg(16 << 10)->Arg(64 << 10)->ThreadRange(1, 16)->UseRealTime();

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
      hgca::cpu::node_free(*machine(), p, bytes);
      state.SkipWithError(cudaGetErrorString(e));
      return;
    }
    unregister_s += seconds_of([&] { cudaHostUnregister(p); });
    hgca::cpu::node_free(*machine(), p, bytes);
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
