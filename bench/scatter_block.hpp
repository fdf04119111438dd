// FlashD2H's scatter into flat blocks, as the benchmarks' "pool" paths do it: one KV head's rows of
// a staged step ([tokens, Hkv, D], token-major) gathered into one contiguous block; and the share
// of the benchmarks' stores that selection kept; the store writes the benchmarks' stores use.
#pragma once

#include <emmintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "kvmgr/store.hpp"

namespace hgca::bench {

/// Copies `rows` rows of `row_bytes` bytes, `stride` bytes apart in `in`, to `out` back to back.
/// `streaming`: non-temporal 16-byte stores (SSE2), so the block's lines are written without being
/// read for ownership first and do not push the staging out of the caches; it needs `out` 16-byte
/// aligned and `row_bytes` a multiple of 16, and ends with a store fence.
inline void gather_block(std::byte* out, const std::byte* in, int32_t rows, std::size_t row_bytes, std::size_t stride,
                         bool streaming) {
  if (!streaming) {
    for (int32_t r = 0; r < rows; ++r) std::memcpy(out + r * row_bytes, in + r * stride, row_bytes);
    return;
  }
  auto* dst = reinterpret_cast<__m128i*>(out);
  for (int32_t r = 0; r < rows; ++r) {
    const auto* src = reinterpret_cast<const __m128i*>(in + r * stride);
    for (std::size_t i = 0; i < row_bytes / 16; ++i) _mm_stream_si128(dst++, _mm_loadu_si128(src + i));
  }
  _mm_sfence();
}

/// How the benchmarks' stores write rows (StoreMemoryOptions::writes): the environment variable
/// HGCA_BENCH_STORE_WRITES, "auto" (the runtime's default, also when unset), "cached" or "streamed".
inline StoreWrites store_writes() {
  const char* env = std::getenv("HGCA_BENCH_STORE_WRITES");
  const std::string_view name = env ? env : "auto";
  for (const StoreWrites w : {StoreWrites::kAuto, StoreWrites::kCached, StoreWrites::kStreamed}) {
    if (name == to_string(w)) return w;
  }
  std::fprintf(stderr, "HGCA_BENCH_STORE_WRITES = \"%s\", expected auto, cached or streamed\n", env);
  std::exit(2);
}

/// The benchmarks' context caches' first segment (StoreMemoryOptions::context_first_segment_bytes):
/// the environment variable HGCA_BENCH_FIRST_SEGMENT_KB, or the library's default when unset.
inline std::size_t first_segment_bytes() {
  const char* env = std::getenv("HGCA_BENCH_FIRST_SEGMENT_KB");
  if (!env) return kvmgr::StoreMemoryOptions{}.context_first_segment_bytes;
  char* end = nullptr;
  const unsigned long long kb = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0' || kb < 1 || kb > (1u << 20)) {
    std::fprintf(stderr, "HGCA_BENCH_FIRST_SEGMENT_KB = \"%s\", expected KiB in [1, 1048576]\n", env);
    std::exit(2);
  }
  return static_cast<std::size_t>(kb) << 10;
}

/// The share of the stores' entries in their context sets, over every KV head (the
/// selected_fraction counter).
inline double selected_fraction(std::span<const std::unique_ptr<kvmgr::MirroredKv>> seqs) {
  double selected = 0.0, stored = 0.0;
  for (const auto& seq : seqs) {
    for (int32_t h = 0; h < seq->dram().n_kv_heads(); ++h) {
      selected += static_cast<double>(seq->dram().store(h).context.size());
      stored += static_cast<double>(seq->dram().store(h).size());
    }
  }
  return stored > 0 ? selected / stored : 0.0;
}

}  // namespace hgca::bench
