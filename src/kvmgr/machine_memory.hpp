// The memory this process may use and can still take: the machine's, or its memory cgroup's where
// lower (a container's limit, cgroup v2 or v1). The DRAM store asks before each chunk it takes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hgca::kvmgr {

class MachineMemory {
 public:
  /// Where the kernel's figures are read (tests point them at files of their own).
  struct Files {
    std::string cgroup_root = "/sys/fs/cgroup";     // cgroup v2's mount, or v1's mounts' parent
    std::string self_cgroup = "/proc/self/cgroup";  // this process's cgroup paths
    std::string meminfo = "/proc/meminfo";
    std::string nodes = "/sys/devices/system/node";  // nodeN/meminfo per NUMA node
  };

  /// Finds this process's memory cgroup files.
  MachineMemory();
  explicit MachineMemory(Files files);

  /// The machine's physical memory (sysconf); 0 where unknown.
  static std::size_t physical_bytes();
  /// The machine's physical memory, or the cgroup's limit where lower; 0 where unknown.
  std::size_t usable_bytes() const;
  /// What the process can still take before the kernel must reclaim what it cannot: MemAvailable,
  /// or the cgroup's limit less its usage (inactive page cache counted as free) where lower;
  /// SIZE_MAX where unknown. Takes no heap memory: it runs where an allocation may just have failed.
  std::size_t available_bytes() const noexcept;
  /// What one NUMA node (the OS's number) can still give memory bound to it: its free memory and
  /// inactive page cache; SIZE_MAX where unknown. No heap either.
  std::size_t node_available_bytes(int os_index) const noexcept;
  /// The NUMA nodes' memory as the OS reports it per node (every nodeN/meminfo's MemTotal, read
  /// when this was made, the nodes a cpuset leaves out included); 0 where unknown.
  std::size_t nodes_total_bytes() const { return nodes_total_bytes_; }

 private:
  struct Cgroup {
    std::string limit, usage, stat;  // the files: memory.max, memory.current, memory.stat (v1's names in v1)
    const char* inactive_file_key;   // memory.stat's key of the inactive page cache
  };
  std::string meminfo_, nodes_;
  std::size_t nodes_total_bytes_ = 0;
  std::vector<Cgroup> cgroups_;
};

}  // namespace hgca::kvmgr
