// A kernel that reads host memory at its host address (unified addressing), to show that the GPU
// can read what the store put in registered chunks.
#pragma once

#include <cstddef>

namespace hgca::test {

/// Copies `bytes` from host address `src` into device memory `dst` with a kernel that dereferences
/// `src` itself, and waits for it. Returns the cudaError_t (0: copied).
int read_through_uva(const void* src, void* dst, std::size_t bytes);

}  // namespace hgca::test
