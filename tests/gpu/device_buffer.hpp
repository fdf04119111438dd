// What the GPU tests share for device memory: an owning buffer and an assertion on CUDA calls.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>

namespace hgca::test {

/// Asserts that a CUDA call succeeded (evaluated once), naming the call and the error.
#define CUDA_OK(x)                                                                   \
  do {                                                                               \
    const cudaError_t cuda_ok_e = (x);                                               \
    ASSERT_EQ(cuda_ok_e, cudaSuccess) << #x << ": " << cudaGetErrorString(cuda_ok_e); \
  } while (0)

/// `count` elements of device memory (p is null when the allocation failed or count is 0).
template <typename T>
struct DevBuf {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DevBuf(std::size_t count) : n(count) {
    if (count) cudaMalloc(&p, count * sizeof(T));
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

}  // namespace hgca::test
