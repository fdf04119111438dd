// What bounds the zero-copy merge from below (host-only declarations, `stream` is a cudaStream_t):
// an empty launch, and a kernel that only reads the CPU's side from mapped memory, in several grid
// shapes. bench_hybrid_layer times them the way it times the merge.
#pragma once

#include <cstdint>

namespace hgca::bench {

/// Enqueues a kernel that does nothing, `blocks` × `threads`. Returns the launch's CUDA error.
int launch_empty(int blocks, int threads, void* stream);

/// Enqueues one thread that spins until *flag (mapped host memory) is nonzero: work queued behind
/// it starts as soon as the host sets the flag, its host-side launch cost already paid.
int launch_gate(const volatile unsigned* flag, void* stream);

/// Enqueues a read of o [rows, quads] float4 and lse [rows] (both may be mapped host memory), as
/// the merge reads its CPU side, but each row's values and LSE loaded together: `threads` per
/// block, `per_thread` (1, 2, 4 or 8) float4 of one grid stride apart in flight per thread, as
/// many blocks as cover the rows once, ld.global.nc when `nc`. `sink` (one unsigned in device
/// memory) depends on every word, so no load is optimized away.
int launch_mapped_read(const float* o, const float* lse, int64_t rows, int32_t quads, int threads, int per_thread,
                       bool nc, unsigned* sink, void* stream);

}  // namespace hgca::bench
