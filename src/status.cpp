// Names of the public enums, dtype sizes, and what the build and the machine offer.
#include "hgca/hgca.hpp"
#ifdef HGCA_WITH_CUDA
#include "gpu/device.hpp"
#endif

namespace hgca {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown status";
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "f32";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
  }
  return "unknown dtype";
}

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::kAuto: return "auto";
    case Backend::kHost: return "host";
    case Backend::kCuda: return "cuda";
  }
  return "unknown backend";
}

std::size_t dtype_size(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

#ifdef HGCA_WITH_CUDA
bool built_with_cuda() { return true; }
int cuda_device_count() { return gpu::usable_device_count(); }
#else
bool built_with_cuda() { return false; }
int cuda_device_count() { return 0; }
#endif

}  // namespace hgca
