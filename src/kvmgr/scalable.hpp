// Containers of the DRAM store that grow and shrink on every worker of the pool at once.
#pragma once

#include <oneapi/tbb/scalable_allocator.h>

#include <vector>

namespace hgca::kvmgr {

/// A vector in oneTBB's scalable allocator (per-thread pools). A FlashD2H scatter allocated ~50
/// times per sequence, ~90 while its stores are young (block lists, per-entry lists, context-cache
/// segments), on 16 threads at once; out of the C library's shared arenas, FlashD2H into fresh
/// stores ran 1.06–1.18× faster at 4–32 layers on the GPU machine (bench/results/session33).
template <typename T>
using ScalableVector = std::vector<T, tbb::scalable_allocator<T>>;

}  // namespace hgca::kvmgr
