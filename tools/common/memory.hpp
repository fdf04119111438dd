// The machine's memory, for the tools' checks that a requested size can fit before a run starts.
#pragma once

#include "kvmgr/machine_memory.hpp"

namespace hgca::tools {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Physical memory of this machine, in GiB.
inline double physical_memory_gib() { return static_cast<double>(kvmgr::MachineMemory::physical_bytes()) / kGiB; }

/// The memory this process may use, in GiB: the machine's, or its cgroup's limit where lower (what
/// the runtime's store measures itself against).
inline double usable_memory_gib() { return static_cast<double>(kvmgr::MachineMemory().usable_bytes()) / kGiB; }

}  // namespace hgca::tools
