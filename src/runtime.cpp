// Runtime::create: validates the options and builds the backend they ask for (auto: CUDA when this
// build has it and a usable GPU exists, the host otherwise).
#include "options_json.hpp"
#include "runtime_backends.hpp"
#include "runtime_base.hpp"

namespace hgca {

Status Runtime::create(const Options& options, std::unique_ptr<Runtime>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "create: out is null");
  Options applied = options;  // HGCA_CONFIG's tuned fields override what the caller set
  if (Status s = apply_config_env(&applied); !s) return s;
  if (Status s = validate_options(applied); !s) return s;
  const bool cuda = applied.backend == Backend::kCuda ||
                    (applied.backend == Backend::kAuto && built_with_cuda() && cuda_device_count() > 0);
  try {
#ifdef HGCA_WITH_CUDA
    if (cuda) return make_cuda_runtime(applied, out);
#else
    (void)cuda;  // validate_options refused kCuda, and auto found no CUDA in this build
#endif
    return make_host_runtime(applied, out);
  } catch (const std::bad_alloc&) {
    return error(StatusCode::kOutOfMemory, "create: host memory exhausted");
  }
}

}  // namespace hgca
