// Store memory for tests that build kvmgr objects themselves: this machine's topology (loaded once)
// and small chunks and first segments, so that a few blocks already span several chunks and a
// short context cache several segments.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "cpu/pool.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"

namespace hgca::test {

inline std::shared_ptr<const cpu::Topology> machine_topology() {
  static const std::shared_ptr<const cpu::Topology> machine = [] {
    std::shared_ptr<const cpu::Topology> t;
    const Status s = cpu::Topology::from_machine(&t);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return t;
  }();
  return machine;
}

inline kvmgr::StoreMemoryOptions small_chunks() {
  kvmgr::StoreMemoryOptions o;
  o.chunk_bytes = 64 << 10;
  o.context_first_segment_bytes = 1 << 10;  // context caches of a few dozen rows span segments
  return o;
}

inline std::shared_ptr<kvmgr::StoreMemory> store_memory(kvmgr::StoreMemoryOptions options = small_chunks(),
                                                        std::shared_ptr<const cpu::Topology> topology = nullptr) {
  std::shared_ptr<kvmgr::StoreMemory> memory;
  const Status s = kvmgr::StoreMemory::create(topology ? std::move(topology) : machine_topology(),
                                              std::move(options), &memory);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return memory;
}

/// A context cache's K (or V) rows, in order, gathered from its segments as context_segments.hpp
/// lays them out (segment 0 of segment_rows() rows, then each segment as long as all before it);
/// also checks that the segment table lists every segment.
inline std::vector<std::byte> cache_rows(const kvmgr::ContextCache& cache, bool v, std::size_t row_bytes) {
  std::vector<std::byte> out;
  int64_t first = 0;
  for (int32_t s = 0; first < cache.rows(); ++s) {
    EXPECT_LT(s, cache.segment_count()) << "rows " << cache.rows() << " past the segments";
    if (s >= cache.segment_count()) break;
    const kvmgr::KvSegment seg = cache.segment(s);
    if (cache.segment_count() > 1) {
      EXPECT_EQ(cache.segments()[s].k, seg.k) << "segment " << s;
      EXPECT_EQ(cache.segments()[s].v, seg.v) << "segment " << s;
    }
    const int64_t size = s == 0 ? cache.segment_rows() : first;  // each later segment doubles the rows
    const int64_t n = std::min(size, cache.rows() - first);
    const auto* p = static_cast<const std::byte*>(v ? seg.v : seg.k);
    out.insert(out.end(), p, p + n * static_cast<int64_t>(row_bytes));
    first += size;
  }
  return out;
}

}  // namespace hgca::test
