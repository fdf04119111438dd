// Device discovery through the CUDA runtime.
#include <cuda_runtime.h>

#include "gpu/device.hpp"

namespace hgca::gpu {

int usable_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error so later calls start clean
    return 0;
  }
  return count;
}

}  // namespace hgca::gpu
