// The kernel of uva_read.hpp: a grid-stride byte copy that dereferences a host address.
#include <cuda_runtime.h>

#include "gpu/uva_read.hpp"

namespace hgca::test {
namespace {

__global__ void copy_bytes(const unsigned char* src, unsigned char* dst, std::size_t bytes) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

}  // namespace

int read_through_uva(const void* src, void* dst, std::size_t bytes) {
  copy_bytes<<<8, 256>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return static_cast<int>(e);
}

}  // namespace hgca::test
