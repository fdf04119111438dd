// Attention of one GQA group's query rows over keys given as contiguous segments, on the host:
// the host twin of the GPU's dense window kernel and the CPU's sparse attention over a context set.
#pragma once

#include <cstdint>
#include <span>

#include "cpu/sparse_engine.hpp"

namespace hgca::cpu {

/// `n` consecutive tokens whose K (and V) rows are `stride` elements apart.
template <typename T>
struct KvSegment {
  const T* k = nullptr;
  const T* v = nullptr;
  int64_t n = 0;
  int64_t stride = 0;
};

/// One call attends `n_rows` query rows × `group` query heads (the heads sharing one KV head) over
/// the concatenation of `segments` (n_keys keys in order).
template <typename T>
struct GroupAttentionParams {
  const T* q = nullptr;       ///< row r, head g at q + r*q_row_stride + g*head_dim
  int64_t q_row_stride = 0;
  int32_t n_rows = 0;
  int32_t group = 1;
  int32_t head_dim = 0;
  float sm_scale = 1.0f;
  std::span<const KvSegment<T>> segments;
  /// < 0: every row sees every key. Otherwise row r sees keys [0, causal_offset + r + 1): the rows
  /// are the last n_rows keys themselves (new tokens attending causally after the window).
  int64_t causal_offset = -1;
  float* o = nullptr;         ///< fp32, normalized over the keys seen; layout like q
  int64_t o_row_stride = 0;
  float* lse = nullptr;       ///< natural log; row r, head g at lse + r*lse_row_stride + g
  int64_t lse_row_stride = 0;
  /// Optional [n_keys]: receives max over the group of the mean over rows of each key's softmax
  /// weight (zero for rows that cannot see it): the `a` of HGCA Algorithm 1, line 8.
  float* weights = nullptr;
};

/// Rows that see no key get o = 0 and lse = -inf. head_dim: a multiple of 8 in [8, 256] (as the
/// runtime validates). On the sparse engine's kernels of `isa` (kAuto: the best this CPU has): the keys' rows are gathered contiguous, then every row attends (and
/// weighs) at once, or, causally, each row over the keys it sees.
template <typename T>
void attend_group(const GroupAttentionParams<T>& p, SparseIsa isa = SparseIsa::kAuto);

}  // namespace hgca::cpu
