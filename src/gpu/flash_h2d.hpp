// FlashH2D (SparseServe §3.2.1): one kernel gathers scattered spans of host memory (store blocks in
// pinned DRAM) into device memory, reading them through unified addressing with a few SMs, so that
// thousands of small blocks stream at the link's rate instead of paying one copy call each.
// Host-only declarations; `stream` is a cudaStream_t.
#pragma once

#include <cstdint>
#include <span>

#include "hgca/hgca.hpp"

namespace hgca::gpu {

/// `bytes` bytes from `src`, host memory the GPU reads in place (pinned, mapped, or registered with
/// cudaHostRegister; the address the GPU uses, which under unified addressing is the host's), to
/// `dst` in device memory. Any size and alignment.
struct H2DSpan {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t bytes = 0;
};

struct FlashH2DConfig {
  /// Thread blocks of 1024 threads: at most this many SMs take part (one block cannot span two),
  /// twice as many for the moment a launch's successor overlaps its tail (many spans).
  /// On the GPU machine 8 already fill the PCIe link at 16 KB blocks (DESIGN.md).
  int32_t sms = 8;
  /// Spans are cut into pieces of at most this many bytes, dealt to the warps round-robin, so that
  /// a large span streams through many warps and small spans each keep one busy. A multiple of 16
  /// in [512, 2^24].
  int32_t piece_bytes = 16384;
};

/// Enqueues the gather of every span on `stream` and returns without waiting. Checks the config and
/// every span (pointers not null unless bytes is 0, bytes ≥ 0) before anything is enqueued; where a
/// span's memory is not what H2DSpan says, the kernel faults. Destinations must not overlap.
/// Many spans take several launches (their descriptors travel in the kernel parameters, so a
/// gather captured into a CUDA graph needs no device-side list); each launch after the first starts
/// in its predecessor's tail (programmatic dependent launch) and completes after it.
Status flash_h2d(std::span<const H2DSpan> spans, const FlashH2DConfig& config, void* stream);

}  // namespace hgca::gpu
