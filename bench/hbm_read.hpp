// The HBM roofline peer of the GPU benchmarks: a kernel that only reads (host-only declaration).
#pragma once

#include <cstddef>

namespace hgca::bench {

/// Enqueues a read of `bytes` (a multiple of 16) at `src` on `stream` (a cudaStream_t) with the
/// attention kernels' 16-byte streaming loads; `sink` (one unsigned in device memory) receives a
/// value depending on every word, so no load is optimized away. Returns the launch's CUDA error.
int launch_hbm_read(const void* src, std::size_t bytes, unsigned* sink, void* stream);

}  // namespace hgca::bench
