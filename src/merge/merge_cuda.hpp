// The zero-copy LSE merge on the GPU (DESIGN.md step 5): the window's partial state from device
// memory and the CPU's from mapped pinned host memory, merged into the output in its dtype.
// Host-only declaration; `stream` is a cudaStream_t.
#pragma once

#include <cstdint>
#include <span>

#include "hgca/hgca.hpp"

namespace hgca::merge {

/// As merge_states (merge_host.hpp), for rows = tokens × heads rows of head_dim (a multiple of 4):
/// o_a, lse_a and o_b, lse_b fp32 (natural-log LSE), any device-accessible memory (o_b, lse_b are
/// read once, so mapped host memory costs one PCIe read), o_a and o_b 16-byte aligned, the LSEs
/// non-null; out [rows, head_dim] in `dtype`, aligned to 4 elements; lse_out optional. Misaligned
/// or null pointers, rows < 0, head_dim not a positive multiple of 4, an unknown dtype:
/// cudaErrorInvalidValue, nothing launched (a pointer that is wrong otherwise still faults).
/// Any number of rows; an empty side (lse = -inf) passes the other through. `out` may be o_a or o_b
/// when dtype is fp32 (each element is read before the thread that reads it writes it); lse_out
/// must not be lse_a or lse_b (a row's LSE is read by all of its threads). Returns the CUDA error.
int launch_merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                        int64_t rows, int32_t head_dim, DType dtype, void* out, float* lse_out,
                        void* stream);

/// One side of a merge: fp32 o [rows, head_dim] and its natural-log LSE [rows].
struct MergeSide {
  const float* o;
  const float* lse;
};

/// As above for 2 or 3 sides (any other count: cudaErrorInvalidValue), in one launch: out =
/// Σ e^{lse_i} o_i / Σ e^{lse_i}, empty sides passing the others through. A call whose CPU side and
/// GPU sparse side both merge into the window's state takes one launch instead of two.
int launch_merge_states(std::span<const MergeSide> sides, int64_t rows, int32_t head_dim, DType dtype, void* out,
                        float* lse_out, void* stream);

/// Loads the merge kernels (2 and 3 sides) writing `dtype`, so that no later launch (one inside a
/// stream capture included) loads a module. Returns the CUDA error.
int load_merge_kernel(DType dtype);

}  // namespace hgca::merge
