// Where a context cache's rows live. A cache never moves a row once its first segment is full: it
// grows by adding segments each as long as all the rows before them, so that S's K/V growth costs
// no copy (the doubling copies of one contiguous span were FlashD2H's largest cost:
// bench/results/flash-transfer/session20-layers). Shared by the store, the CPU engine and the GPU
// sparse kernel, which find a row's segment by the same arithmetic.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HGCA_HOST_DEVICE __host__ __device__
#else
#define HGCA_HOST_DEVICE
#endif

namespace hgca::kvmgr {

/// One segment's K rows and V rows, [rows, head_dim] each, contiguous.
struct KvSegment {
  const void* k = nullptr;
  const void* v = nullptr;
};

/// Most segments of one cache: segment_rows · 2^(kMaxContextSegments − 1) rows, more than any store holds.
inline constexpr int32_t kMaxContextSegments = 40;

/// With a first segment of `segment_rows` rows (a power of two), segment 0 holds rows
/// [0, segment_rows) and segment s ≥ 1 rows [segment_rows·2^(s−1), segment_rows·2^s).
HGCA_HOST_DEVICE inline int64_t context_segment_first(int32_t s, int64_t segment_rows) {
  return s == 0 ? 0 : segment_rows << (s - 1);
}

/// The segment holding row r.
HGCA_HOST_DEVICE inline int32_t context_segment_of(int64_t r, int64_t segment_rows) {
  if (r < segment_rows) return 0;
  const auto q = static_cast<unsigned long long>(r / segment_rows);  // ≥ 1
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(q));
#else
  return 64 - __builtin_clzll(q);
#endif
}

/// Rows of segment s: segment_rows for s ≤ 1, then doubling.
HGCA_HOST_DEVICE inline int64_t context_segment_rows(int32_t s, int64_t segment_rows) {
  return s <= 1 ? segment_rows : segment_rows << (s - 1);
}

/// One past segment s's last row: where segment s + 1 starts.
HGCA_HOST_DEVICE inline int64_t context_segment_end(int32_t s, int64_t segment_rows) {
  return context_segment_first(s + 1, segment_rows);
}

}  // namespace hgca::kvmgr
