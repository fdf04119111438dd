// Store memory for tests that build kvmgr objects themselves: this machine's topology (loaded once)
// and small chunks, so that a few blocks already span several.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "cpu/pool.hpp"
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

}  // namespace hgca::test
