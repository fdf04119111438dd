// Registration of host ranges with CUDA (see host_memory.hpp).
#include "gpu/host_memory.hpp"

#include <cuda_runtime.h>

namespace hgca::gpu {
namespace {

/// The store memory's thread registers chunks while the caller's thread may be capturing a stream
/// in global mode, where a (un)registration from any thread counts as a capture-unsafe call and
/// invalidates that capture; neither touches a stream, so this thread takes relaxed mode for them.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace

int register_host_range(int device, void* base, std::size_t bytes) {
  const RelaxedCaptureMode relaxed;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaHostRegister(base, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call on this thread
  return static_cast<int>(e);
}

int unregister_host_range(int device, void* base) {
  const RelaxedCaptureMode relaxed;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaHostUnregister(base);
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

}  // namespace hgca::gpu
