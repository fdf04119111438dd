// FlashH2D's gather kernel and its host side (see flash_h2d.hpp). Each warp copies whole pieces:
// 16-byte loads, kUnroll of them in flight per lane (4 KB per warp) so that a few SMs keep enough
// reads outstanding to cover the PCIe round trip; byte loads only for a piece's unaligned ends.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpu/flash_h2d.hpp"

namespace hgca::gpu {
namespace {

constexpr int kThreads = 1024;  // one block fills an SM's warp slots halfway: its SM does nothing else
constexpr int kWarps = kThreads / 32;
constexpr int kUnroll = 8;
// Spans per launch: their descriptors fill the 32 KB of kernel parameters CUDA 12.1+ allows.
constexpr int kMaxSpans = 1360;
// A call of at most this many spans (the descriptors of spans over kMaxSpanBytes may take more
// launches) launches kernels with 1.5 KB of parameters instead: the host's time in a call of 1 to
// 64 spans fell from 9-12 to 4-5 µs on the GPU machine (bench/results/session36).
constexpr int kFewSpans = 64;
// Longer spans are described as several (descriptor sizes are 32-bit).
constexpr int64_t kMaxSpanBytes = int64_t{1} << 30;

struct Span {
  const std::byte* src;
  std::byte* dst;
  uint32_t bytes;
  uint32_t first_piece;  // pieces of the launch's earlier spans
};

template <int kSpans>
struct Launch {
  Span span[kSpans];
  int32_t count;
  int32_t pieces;
  int32_t piece_bytes;
};
static_assert(sizeof(Launch<kMaxSpans>) <= 32764, "kernel parameters are limited to 32764 bytes");

__device__ __forceinline__ void store16(std::byte* d, const uint4& r) {
  if ((reinterpret_cast<uintptr_t>(d) & 15) == 0) {
    *reinterpret_cast<uint4*>(d) = r;
  } else {  // dst misaligned against src: device-memory byte stores are cheap next to PCIe reads
    const auto* b = reinterpret_cast<const std::byte*>(&r);
#pragma unroll
    for (int i = 0; i < 16; ++i) d[i] = b[i];
  }
}

/// One warp copies n bytes: the bytes before src's first 16-byte boundary and after its last one
/// byte by byte (one lane each), the rest as 16-byte words.
__device__ __forceinline__ void copy_piece(const std::byte* src, std::byte* dst, int32_t n, int lane) {
  const auto to_boundary = static_cast<int32_t>((16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15);
  const int32_t head = n < to_boundary ? n : to_boundary;
  const int32_t words = (n - head) / 16;
  const int32_t tail_at = head + words * 16;
  const int32_t tail = n - tail_at;
  std::byte head_byte{}, tail_byte{};
  if (lane < head) head_byte = src[lane];
  if (lane < tail) tail_byte = src[tail_at + lane];
  const auto* s = reinterpret_cast<const uint4*>(src + head);
  std::byte* d = dst + head;
  for (int32_t base = 0; base < words; base += 32 * kUnroll) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int32_t w = base + u * 32 + lane;
      if (w < words) r[u] = s[w];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int32_t w = base + u * 32 + lane;
      if (w < words) store16(d + static_cast<int64_t>(w) * 16, r[u]);
    }
  }
  if (lane < head) dst[lane] = head_byte;
  if (lane < tail) dst[tail_at + lane] = tail_byte;
}

/// Launches after a call's first are its predecessor's programmatic dependents: each warp lets the
/// next launch start once it takes its last piece (the next launch's blocks then fill the SMs this
/// one's tail leaves idle, instead of a launch gap of about 11 µs each), and every launch ends with
/// griddepcontrol.wait, so that a launch completes only after its predecessor did and the stream's
/// later work sees every span gathered.
template <int kSpans>
__global__ void __launch_bounds__(kThreads, 1) flash_h2d_kernel(const __grid_constant__ Launch<kSpans> l) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warps = static_cast<int>(gridDim.x) * kWarps;
  for (int g = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x) / 32; g < l.pieces; g += warps) {
    if (g + warps >= l.pieces) asm volatile("griddepcontrol.launch_dependents;");
    int lo = 0, hi = l.count - 1;  // the span holding piece g: the last whose first_piece ≤ g
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (static_cast<int>(l.span[mid].first_piece) <= g) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const Span& s = l.span[lo];
    const int64_t offset = static_cast<int64_t>(g - static_cast<int>(s.first_piece)) * l.piece_bytes;
    const int64_t left = static_cast<int64_t>(s.bytes) - offset;
    const auto n = static_cast<int32_t>(left < l.piece_bytes ? left : l.piece_bytes);
    copy_piece(s.src + offset, s.dst + offset, n, lane);
  }
  asm volatile("griddepcontrol.launch_dependents;");  // warps with no piece (a repeat does nothing)
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

/// Launches l's spans on `sms` blocks at most and empties l. A dependent launch is its stream
/// predecessor's programmatic dependent (see flash_h2d_kernel); a call's first launch waits for the
/// stream's earlier work as usual.
template <int kSpans>
cudaError_t launch(Launch<kSpans>& l, int32_t sms, void* stream, bool dependent) {
  if (l.count == 0) return cudaSuccess;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(std::min(sms, (l.pieces + kWarps - 1) / kWarps)));
  cfg.blockDim = dim3(kThreads);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = dependent ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, flash_h2d_kernel<kSpans>, l);
  l.count = 0;
  l.pieces = 0;
  return e;
}

/// Cuts the spans into descriptors of at most kMaxSpanBytes and launches them, kSpans a launch.
template <int kSpans>
cudaError_t gather(std::span<const H2DSpan> spans, const FlashH2DConfig& config, void* stream) {
  auto l = std::make_unique<Launch<kSpans>>();  // up to 32 KB: not on the caller's stack
  l->count = l->pieces = 0;
  l->piece_bytes = config.piece_bytes;
  bool dependent = false;
  for (const H2DSpan& s : spans) {
    for (int64_t offset = 0; offset < s.bytes; offset += kMaxSpanBytes) {
      const int64_t bytes = std::min(kMaxSpanBytes, s.bytes - offset);
      const auto pieces = static_cast<int32_t>((bytes + config.piece_bytes - 1) / config.piece_bytes);
      if (l->count == kSpans || l->pieces > INT32_MAX - pieces) {
        if (cudaError_t e = launch(*l, config.sms, stream, dependent); e != cudaSuccess) return e;
        dependent = true;
      }
      l->span[l->count++] = {static_cast<const std::byte*>(s.src) + offset, static_cast<std::byte*>(s.dst) + offset,
                             static_cast<uint32_t>(bytes), static_cast<uint32_t>(l->pieces)};
      l->pieces += pieces;
    }
  }
  return launch(*l, config.sms, stream, dependent);
}

Status invalid(const std::string& message) { return {StatusCode::kInvalidArgument, "flash_h2d: " + message}; }

bool valid(const H2DSpan& s) { return s.bytes == 0 || (s.bytes > 0 && s.src && s.dst); }

Status invalid_span(std::size_t i, const H2DSpan& s) {
  const std::string at = "spans[" + std::to_string(i) + "]";
  if (s.bytes < 0) return invalid(at + ".bytes = " + std::to_string(s.bytes) + ", expected ≥ 0");
  return invalid(at + (s.src ? ".dst" : ".src") + " is null (bytes = " + std::to_string(s.bytes) + ")");
}

Status cuda_error(const char* what, cudaError_t e) {
  cudaGetLastError();
  return {e == cudaErrorMemoryAllocation ? StatusCode::kOutOfMemory : StatusCode::kInternal,
          std::string("flash_h2d: ") + what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")"};
}

}  // namespace

Status flash_h2d(std::span<const H2DSpan> spans, const FlashH2DConfig& config, void* stream) {
  int device = 0, sm_count = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_error("cudaGetDevice", e);
  if (cudaError_t e = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) {
    return cuda_error("cudaDeviceGetAttribute", e);
  }
  if (config.sms < 1 || config.sms > sm_count) {
    return invalid("config.sms = " + std::to_string(config.sms) + ", expected in [1, " + std::to_string(sm_count) +
                   "] (the device's SMs)");
  }
  if (config.piece_bytes < 512 || config.piece_bytes > (1 << 24) || config.piece_bytes % 16 != 0) {
    return invalid("config.piece_bytes = " + std::to_string(config.piece_bytes) +
                   ", expected a multiple of 16 in [512, 16777216]");
  }
  // The message is built for a bad span only: one per span cost ~30 ns each before the first launch
  // (0.5 ms for 16 K spans, time in which the GPU waits for the gather to start).
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!valid(spans[i])) return invalid_span(i, spans[i]);
  }

  const cudaError_t e =
      spans.size() <= kFewSpans ? gather<kFewSpans>(spans, config, stream) : gather<kMaxSpans>(spans, config, stream);
  if (e != cudaSuccess) return cuda_error("kernel launch", e);
  return Status::ok();
}

}  // namespace hgca::gpu
