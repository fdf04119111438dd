// A read-only kernel as fast as the memory allows: enough 16-byte loads in flight per SM (8 blocks
// of 256 threads, 4 loads each per step), grid-stride, one XOR per word.
#include <cuda_runtime.h>

#include "gpu/attention_common.cuh"
#include "hbm_read.hpp"

namespace hgca::bench {
namespace {

constexpr int kThreads = 256, kUnroll = 4;

__global__ void __launch_bounds__(kThreads) hbm_read_kernel(const uint4* src, std::size_t words, unsigned* sink) {
  const std::size_t stride = std::size_t{gridDim.x} * kThreads;
  unsigned acc = 0;
  std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < words; i += kUnroll * stride) {
    uint4 w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) w[u] = gpu::kernels::load_stream16(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= w[u].x ^ w[u].y ^ w[u].z ^ w[u].w;
  }
  for (; i < words; i += stride) {
    const uint4 w = gpu::kernels::load_stream16(src + i);
    acc ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  if (acc == 0x9e3779b9u) atomicXor(sink, acc);  // almost never taken, but the compiler cannot know
}

}  // namespace

int launch_hbm_read(const void* src, std::size_t bytes, unsigned* sink, void* stream) {
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) return e;
  hbm_read_kernel<<<sms * 8, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const uint4*>(src),
                                                                                 bytes / 16, sink);
  return cudaGetLastError();
}

}  // namespace hgca::bench
