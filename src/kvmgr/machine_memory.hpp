// The memory this process may use and can still take: the machine's, or its memory cgroup's where
// lower (a container's limit, cgroup v2 or v1). The DRAM store asks before each chunk it takes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hgca::kvmgr {

class MachineMemory {
 public:
  /// Finds this process's memory cgroup files (reading /proc/self/cgroup).
  MachineMemory();

  /// The machine's physical memory, or the cgroup's limit where lower; 0 where unknown.
  std::size_t usable_bytes() const;
  /// What the process can still take before the kernel must reclaim what it cannot: MemAvailable,
  /// or the cgroup's limit less its usage (inactive page cache counted as free) where lower;
  /// SIZE_MAX where unknown. Takes no heap memory: it runs where an allocation may just have failed.
  std::size_t available_bytes() const noexcept;

 private:
  struct Cgroup {
    std::string limit, usage, stat;  // the files: memory.max, memory.current, memory.stat (v1's names in v1)
    const char* inactive_file_key;   // memory.stat's key of the inactive page cache
  };
  std::vector<Cgroup> cgroups_;
};

}  // namespace hgca::kvmgr
