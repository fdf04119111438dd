// Random device data for the GPU benchmarks, filled fast (one host chunk, then device copies).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace hgca::bench {

/// Fills `bytes` of device (or mapped pinned host) memory with random bf16 N(0, 1) values: one 16 MB
/// host chunk, then copies of it on the device at seed-dependent offsets (fast; the data never repeats within
/// any 8 MB window, and nothing is zero).
inline cudaError_t fill_random_bf16(void* dst, std::size_t bytes, uint64_t seed) {
  constexpr std::size_t kChunk = std::size_t{16} << 20;
  static void* device_chunk = [] {
    std::vector<uint16_t> v(kChunk / 2);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& x : v) {
      const float f = dist(rng);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      x = static_cast<uint16_t>(u >> 16);
    }
    void* d = nullptr;
    if (cudaMalloc(&d, kChunk) != cudaSuccess ||
        cudaMemcpy(d, v.data(), kChunk, cudaMemcpyHostToDevice) != cudaSuccess)
      return static_cast<void*>(nullptr);
    return d;
  }();
  if (device_chunk == nullptr) return cudaErrorMemoryAllocation;
  auto* d = static_cast<char*>(dst);
  constexpr std::size_t kPiece = kChunk / 2;
  for (std::size_t off = 0; off < bytes; off += kPiece) {
    const std::size_t shift = ((seed * 7919 + off / kPiece) * 4099 * 16) % kPiece;
    const std::size_t n = std::min(kPiece, bytes - off);
    if (cudaError_t e = cudaMemcpy(d + off, static_cast<const char*>(device_chunk) + shift, n,
                                   cudaMemcpyDefault);
        e != cudaSuccess)
      return e;
  }
  return cudaDeviceSynchronize();
}

}  // namespace hgca::bench
