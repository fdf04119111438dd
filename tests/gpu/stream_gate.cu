#include <cuda_runtime.h>

#include "gpu/stream_gate.hpp"

namespace hgca::test {
namespace {

__global__ void wait_for_gate(volatile int* flags) {
  const long long start = clock64();
  while (flags[0] == 0) {
    if (clock64() - start > 40'000'000'000LL) {  // ~20 s at 2 GHz
      flags[1] = 1;
      return;
    }
  }
}

}  // namespace

StreamGate::StreamGate(void* stream) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  flags_ = static_cast<volatile int*>(p);
  flags_[0] = 0;
  flags_[1] = 0;
  wait_for_gate<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(flags_);
  holding_ = cudaGetLastError() == cudaSuccess;
}

StreamGate::~StreamGate() {
  open();
  cudaDeviceSynchronize();
  if (flags_) cudaFreeHost(const_cast<int*>(flags_));
}

void StreamGate::open() {
  if (flags_) flags_[0] = 1;
}

bool StreamGate::timed_out() const { return flags_ && flags_[1] != 0; }

}  // namespace hgca::test
