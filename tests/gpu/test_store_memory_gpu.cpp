// The store's memory as the GPU sees it: chunks registered once each by the CUDA backend's hook, and
// store blocks and context caches, filled by real appends, read by a kernel at their host addresses.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/host_memory.hpp"
#include "harness.hpp"
#include "gpu/uva_read.hpp"
#include "hgca/hgca.hpp"
#include "kvmgr/store.hpp"
#include "reference/reference.hpp"
#include "store_memory_fixture.hpp"

namespace hgca {
namespace {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

/// What a kernel reads at `host` equals the bytes there.
void expect_kernel_reads(const std::byte* host, std::size_t bytes, const char* what) {
  SCOPED_TRACE(what);
  cudaPointerAttributes attr{};
  CUDA_OK(cudaPointerGetAttributes(&attr, host));
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);     // registered (pinned) host memory
  EXPECT_EQ(attr.devicePointer, host);          // unified addressing: the same address
  void* dst = nullptr;
  CUDA_OK(cudaMalloc(&dst, bytes));
  CUDA_OK(cudaMemset(dst, 0xA5, bytes));
  EXPECT_EQ(test::read_through_uva(host, dst, bytes), 0);
  std::vector<std::byte> back(bytes);
  CUDA_OK(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(dst));
  EXPECT_EQ(std::memcmp(back.data(), host, bytes), 0);
}

TEST(GpuStoreMemory, KernelsReadStoreBlocksAndContextCachesAtTheirHostAddresses) {
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  kvmgr::StoreMemoryOptions o;
  o.chunk_bytes = 1 << 20;
  o.registration.register_chunk = [device](void* base, std::size_t bytes) -> Status {
    const int e = gpu::register_host_range(device, base, bytes);
    return e == 0 ? Status::ok() : Status(StatusCode::kInternal, cudaGetErrorString(static_cast<cudaError_t>(e)));
  };
  o.registration.unregister_chunk = [device](void* base, std::size_t) { gpu::unregister_host_range(device, base); };
  auto memory = test::store_memory(o);

  constexpr int32_t kBlock = 16, kHkv = 2, kD = 64;
  const std::size_t row = kD * sizeof(uint16_t);
  kvmgr::DramStore store(kBlock, kHkv, kD, sizeof(uint16_t), memory, 0);
  std::mt19937_64 rng(8);
  const kvmgr::SelectionParams all{0.0f, 0, 1};  // every entry selected: the caches hold the store
  for (int append = 0; append < 25; ++append) {  // 1200 rows: segments past the first's 128
    const int64_t count = 3 * kBlock;
    const auto k = ref::encode(ref::normal(rng, count * kHkv * kD), DType::kFloat16);
    const auto v = ref::encode(ref::normal(rng, count * kHkv * kD), DType::kFloat16);
    const std::vector<float> maw(static_cast<std::size_t>(count * kHkv), 0.5f);
    store.append(k.data(), v.data(), maw.data(), count, static_cast<uint32_t>(count), all);
  }
  memory->wait_idle();  // chunks grown synchronously are registered by now

  const auto chunks = memory->chunks();
  ASSERT_FALSE(chunks.empty());
  for (const auto& c : chunks) EXPECT_TRUE(c.registered) << "chunk at " << c.base;
  const StoreMemoryStats st = memory->stats(0);
  EXPECT_EQ(st.registered_chunks, st.chunks);
  EXPECT_EQ(st.registration_failures, 0);

  for (int32_t h = 0; h < kHkv; ++h) {
    const auto& s = store.store(h);
    ASSERT_EQ(s.context_cache.rows(), store.size());
    for (std::size_t b : {std::size_t{0}, s.blocks.size() - 1}) {
      EXPECT_TRUE(s.blocks[b]->memory.device_readable());
      expect_kernel_reads(s.blocks[b]->k(), kBlock * row, "block K");
      expect_kernel_reads(s.blocks[b]->v(), kBlock * row, "block V");
    }
    EXPECT_GE(s.context_cache.segment_count(), 2);
    EXPECT_TRUE(s.context_cache.device_readable());
    for (int32_t seg = 0, first = 0; first < s.context_cache.rows(); ++seg) {
      const int64_t size = seg == 0 ? s.context_cache.segment_rows() : first;
      const int64_t n = std::min(size, s.context_cache.rows() - first);
      expect_kernel_reads(static_cast<const std::byte*>(s.context_cache.segment(seg).k), n * row, "context cache K");
      expect_kernel_reads(static_cast<const std::byte*>(s.context_cache.segment(seg).v), n * row, "context cache V");
      first += static_cast<int32_t>(size);
    }
    if (s.context_cache.segments()) {
      expect_kernel_reads(reinterpret_cast<const std::byte*>(s.context_cache.segments()), s.context_cache.segment_count() * sizeof(kvmgr::KvSegment), "segment table");
    }
  }
}

TEST(GpuStoreMemory, TheCudaBackendRegistersItsStoreChunks) {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = 4;
  o.n_kv_heads = 2;
  o.head_dim = 64;
  o.dtype = DType::kBFloat16;
  o.window_blocks = 2;
  o.block_tokens = 8;
  o.beta = 0.0f;
  o.deterministic = true;
  o.threads = 2;
  o.backend = Backend::kCuda;
  o.store_chunk_bytes = 1 << 20;
  test::Harness h(o, 3);
  h.add(1);
  h.add(2);
  for (int step = 0; step < 6; ++step) h.step({1, 2}, {13, 1});
  ASSERT_TRUE(h.runtime().synchronize().is_ok());
  std::vector<StoreMemoryStats> st;
  ASSERT_TRUE(h.runtime().store_memory_stats(&st).is_ok());
  ASSERT_FALSE(st.empty());
  EXPECT_GT(st[0].used_bytes, 0);
  EXPECT_GT(st[0].chunks, 0);
  EXPECT_EQ(st[0].registered_chunks, st[0].chunks);
  EXPECT_EQ(st[0].registration_failures, 0);
}

}  // namespace
}  // namespace hgca
