// Runtime::create: validates the options and builds the backend they ask for (auto: CUDA when this
// build has it and a usable GPU exists, the host otherwise) on this machine's NUMA pool.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "cpu/sparse_engine.hpp"
#include "options_json.hpp"
#include "runtime_backends.hpp"
#include "runtime_base.hpp"

namespace hgca {

Status Machine::current(Machine* out) {
  // The topology does not change while we run, and loading it (PCI devices included) is not free.
  static const auto machine = [] {
    std::shared_ptr<const cpu::Topology> topology;
    Status s = cpu::Topology::from_machine(&topology);
    return std::pair{std::move(s), std::move(topology)};
  }();
  if (!machine.first) return machine.first;
  *out = {machine.second, cpu::supported_isas(), {}};
  return Status::ok();
}

namespace {

/// `s` with "create: " in front where it lacks it: create's errors name it, as every call's do.
Status as_create(Status s) {
  if (s || s.message().starts_with("create: ")) return s;
  return error(s.code(), "create: {}", s.message());
}

/// Whether the machine's CPU runs the ISA path `isa` (auto: always).
Status isa_runs_on(CpuIsa isa, const Machine& machine) {
  if (isa == CpuIsa::kAuto || std::find(machine.isas.begin(), machine.isas.end(), isa) != machine.isas.end()) {
    return Status::ok();
  }
  std::vector<const char*> runs{to_string(CpuIsa::kAuto)};
  for (CpuIsa i : machine.isas) runs.push_back(to_string(i));
  return error(StatusCode::kInvalidArgument, "isa = {}: this CPU cannot run that path; expected one it runs: {}",
               to_string(isa), fmt::join(runs, ", "));
}

Status build_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "create: out is null");
  if (!machine.topology) return error(StatusCode::kInvalidArgument, "create: machine.topology is null");
  if (Status s = validate_options(options); !s) return s;
  if (Status s = isa_runs_on(options.isa, machine); !s) return s;
  const bool cuda = options.backend == Backend::kCuda ||
                    (options.backend == Backend::kAuto && built_with_cuda() && cuda_device_count() > 0);
  try {
#ifdef HGCA_WITH_CUDA
    if (cuda) return make_cuda_runtime(options, machine, out);
#else
    (void)cuda;  // validate_options refused kCuda, and auto found no CUDA in this build
#endif
    return make_host_runtime(options, machine, out);
  } catch (const std::bad_alloc&) {
    return error(StatusCode::kOutOfMemory, "create: host memory exhausted");
  }
}

}  // namespace

Status create_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out) {
  return as_create(build_runtime(options, machine, out));
}

Status create_runtime_with_config(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out) {
  Options applied = options;  // HGCA_CONFIG's tuned fields override what the caller set
  if (Status s = apply_config_env(&applied); !s) return as_create(s);
  // A path the file sets that this CPU lacks is the file's (tuned on another machine): named so.
  if (applied.isa != options.isa) {
    if (Status s = isa_runs_on(applied.isa, machine); !s) {
      return error(s.code(), "create: HGCA_CONFIG = \"{}\" sets {}", std::getenv("HGCA_CONFIG"), s.message());
    }
  }
  return create_runtime(applied, machine, out);
}

Status Runtime::create(const Options& options, std::unique_ptr<Runtime>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "create: out is null");
  Machine machine;
  if (Status s = Machine::current(&machine); !s) return as_create(s);
  return create_runtime_with_config(options, machine, out);
}

}  // namespace hgca
