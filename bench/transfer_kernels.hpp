// The GPU work bench_transfer puts beside the transfers (host-only declarations).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// A compute-bound kernel: `blocks` × 256 threads of FMA chains in registers, `iters` rounds.
cudaError_t launch_compute(int blocks, int iters, void* out, cudaStream_t stream);
/// GPU-direct saving (what SparseServe rejects for FlashD2H): `blocks` × 1024 threads of SMs store
/// `bytes` (a multiple of 16) from device memory into pinned host memory.
cudaError_t launch_sm_copy(int blocks, const void* src, void* dst, std::size_t bytes, cudaStream_t stream);
