// Registration of host ranges with CUDA (see host_memory.hpp).
#include "gpu/host_memory.hpp"

#include <cuda_runtime.h>

namespace hgca::gpu {

int register_host_range(int device, void* base, std::size_t bytes) {
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaHostRegister(base, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call on this thread
  return static_cast<int>(e);
}

int unregister_host_range(int device, void* base) {
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaHostUnregister(base);
  if (e != cudaSuccess) cudaGetLastError();
  return static_cast<int>(e);
}

}  // namespace hgca::gpu
