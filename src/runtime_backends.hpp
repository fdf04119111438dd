// The machine a runtime is built for, and the backends' factories (runtime.cpp picks one).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cpu/pool.hpp"
#include "hgca/hgca.hpp"

namespace hgca {

/// What a runtime needs to know of the machine it runs on. Runtime::create describes this one
/// (Machine::current); tests describe others — 2- and 4-node synthetic or XML topologies, a CPU
/// without some ISA paths, a GPU's PCI bus id — to see what a runtime decides there.
struct Machine {
  std::shared_ptr<const cpu::Topology> topology;
  std::vector<CpuIsa> isas;  ///< the paths Options::isa may force (cpu::supported_isas())
  /// The GPU whose NUMA nodes placement prefers. Empty: the CUDA backend asks its own device, the
  /// host backend has none.
  std::string gpu_pci_bus_id;

  /// This machine: its hwloc topology (loaded once per process) and its CPU's ISA paths.
  static Status current(Machine* out);
};

/// Runtime::create on `machine` (without HGCA_CONFIG): validates `options`, including the ISA
/// path against the machine's CPU, and builds the backend they ask for.
Status create_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out);
/// Runtime::create on `machine`: HGCA_CONFIG's file applied over `options` (an error in it, or an
/// ISA path it sets that the machine's CPU lacks, named with it), then create_runtime.
Status create_runtime_with_config(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out);

/// The host backend; fails when the store memory cannot be set up.
Status make_host_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out);
/// The CUDA backend; fails with kOutOfMemory when its device or pinned memory cannot be had.
Status make_cuda_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out);

}  // namespace hgca
