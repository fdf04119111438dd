// Host memory made readable by the GPU in place (host-only declarations, no CUDA types): what the
// CUDA backend's store memory does with each chunk.
#pragma once

#include <cstddef>

namespace hgca::gpu {

/// Registers [base, base + bytes) as pinned, mapped and portable memory, so that kernels on any
/// device read it at its host address (unified addressing). Makes `device` current first: the
/// store memory calls it on its own thread. Returns the cudaError_t (0: registered).
int register_host_range(int device, void* base, std::size_t bytes);
/// The inverse; returns the cudaError_t.
int unregister_host_range(int device, void* base);

}  // namespace hgca::gpu
