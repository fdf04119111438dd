// Sparse attention on the GPU over context sets in device-readable memory: the GPU twin of
// cpu::SparseEngine::attend, for the overflow policy (issue 5, item 3), which attends some items
// on the GPU after FlashH2D has gathered their context sets. Host-only declarations (no CUDA
// types; `stream` is a cudaStream_t); the few helpers marked HGCA_HOST_DEVICE are shared with the
// kernels so that their index arithmetic is tested on the CPU too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "hgca/hgca.hpp"
#include "kvmgr/context_segments.hpp"  // also HGCA_HOST_DEVICE

namespace hgca::gpu {

/// One (sequence, KV head) item, exactly as cpu::SparseItem (same fields, strides and results,
/// without the NUMA node): the group's n_rows query rows attend to all n keys of the head's context
/// set, K and V [n, head_dim] in the call's dtype, contiguous or in segments. There is no mask:
/// every context entry is older than every new token. Every pointer is device-readable (device
/// memory, or pinned host memory mapped into the device's address space). K and V rows are read
/// with 16-byte loads where k and v (a segment's K and V) are 16-byte aligned, element by element
/// otherwise.
struct SparseAttentionItem {
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t n = 0;             ///< keys; 0 gives o = 0, lse = -inf
  const void* q = nullptr;   ///< row r, query head g of the group at q + r*q_row_stride + g*head_dim (elements)
  int64_t q_row_stride = 0;
  int32_t n_rows = 1;        ///< 1: decode; more: append (the new tokens of the sequence)
  float* o = nullptr;        ///< fp32, normalized over the keys; row r, head g at o + r*o_row_stride + g*head_dim
  int64_t o_row_stride = 0;
  float* lse = nullptr;      ///< natural log of Σ exp(scaled score); row r, head g at lse + r*lse_row_stride + g
  int64_t lse_row_stride = 0;
  /// Non-null: the keys lie in a context cache's segments (kvmgr/context_segments.hpp), segment s
  /// at segments[s] (a device-readable table), the first of segment_rows rows; k and v are
  /// segment 0's.
  const kvmgr::KvSegment* segments = nullptr;
  int64_t segment_rows = 0;
};

/// What a launch is sized for. The kernels read the items on the device, so these may be bounds
/// known before the items are (e.g. items written later by a host function in a CUDA graph): an
/// item longer, or with more rows, than planned for is still attended exactly, with less
/// parallelism.
struct SparseAttentionShape {
  int32_t n_items = 0;
  int64_t max_n = 0;     ///< keys of the longest item
  int64_t total_n = 0;   ///< Σ n over the items
  int32_t max_rows = 1;  ///< most query rows of an item
};

/// Most (row, head) pairs in one block's tile: a block reads its item's K/V rows once for them, so
/// an item of P pairs is read ceil(P / 8) times (over the link when it lies in host memory).
inline constexpr int32_t kMaxSparseTilePairs = 8;
/// Most blocks over one item's keys (and partial states per (row, head) pair).
inline constexpr int32_t kMaxSparseSplits = 64;
/// Split chunks are multiples of this many keys.
inline constexpr int64_t kSparseChunkGranule = 64;
/// Items with more (row, head) pairs than this are never split over their keys: their tiles
/// already give the GPU enough blocks, and their partial states would need a large workspace.
inline constexpr int32_t kMaxSparseSplitPairs = 1024;

/// How one launch divides the work. Item z's (row, head) pairs, flattened as r·G + g, go in tiles
/// of `tile_pairs`, one per block (blocks loop when an item has more than `tiles` tiles); each block
/// reads each K/V row once for all pairs of its tile. An item with at most `split_pairs` pairs also
/// divides its keys into up to `kv_splits` chunks (sparse_key_chunks), one block each; a second
/// kernel merges their partial states exactly by LSE.
struct SparseAttentionPlan {
  int32_t tile_pairs = 1;   ///< 1, 2, 4 or 8
  int32_t tiles = 1;        ///< blocks per item along its pairs, in [1, 65535]
  int32_t kv_splits = 1;    ///< in [1, kMaxSparseSplits]
  int32_t split_pairs = 0;  ///< in [0, kMaxSparseSplitPairs]; 0 when kv_splits = 1
};

/// Blocks of the attend kernel resident on one SM for a tile of `tile_pairs` pairs: what its launch
/// bounds ask of the register allocator (96 / 96 / 128 / 168 registers), the most without spills
/// (ptxas -v, sm_90, every dtype and head dim).
constexpr int32_t sparse_blocks_per_sm(int32_t tile_pairs) {
  return tile_pairs <= 2 ? 5 : tile_pairs <= 4 ? 4 : 3;
}

/// Chooses the launch for `shape` with GQA group `group` on a GPU of `sm_count` multiprocessors:
/// tiles of G pairs (a power of two) for decode and 8 for appends; key splits where items × tiles
/// blocks would leave SMs idle, the count minimizing the larger of the longest chunk and the waves
/// of the average block over the resident ones. Pure host code.
SparseAttentionPlan plan_sparse_attention(const SparseAttentionShape& shape, int32_t group, int32_t sm_count);

/// Keys of one block of an item: chunk c covers [c·size, min(n, (c + 1)·size)), c < count.
struct SparseKeyChunks {
  int64_t size = 0;
  int32_t count = 1;  ///< ≥ 1; an empty item has one empty chunk
};

/// How `plan` divides an item of n keys and `pairs` (row, head) pairs (the kernels call this).
HGCA_HOST_DEVICE inline SparseKeyChunks sparse_key_chunks(int64_t n, int64_t pairs, const SparseAttentionPlan& plan) {
  if (n <= 0) return {0, 1};
  if (plan.kv_splits <= 1 || pairs > plan.split_pairs) return {n, 1};
  int64_t size = (n + plan.kv_splits - 1) / plan.kv_splits;
  size = (size + kSparseChunkGranule - 1) / kSparseChunkGranule * kSparseChunkGranule;
  return {size, static_cast<int32_t>((n + size - 1) / size)};
}

/// The partial state of item z, pair p (< split_pairs), chunk c (< kv_splits) in the workspace: its
/// (max, sum) pair at float index 2·slot of the first region, its unnormalized output at float index
/// slot·head_dim of the second (sparse_partials_offset bytes in).
HGCA_HOST_DEVICE inline int64_t sparse_partial_slot(int64_t z, int64_t p, int64_t c, const SparseAttentionPlan& plan) {
  return (z * plan.split_pairs + p) * plan.kv_splits + c;
}
/// Byte offset of the workspace's output region for `n_items` items.
std::size_t sparse_partials_offset(const SparseAttentionPlan& plan, int32_t n_items);
/// Device workspace a launch of `n_items` items needs (0 when the plan splits nothing).
std::size_t sparse_attention_workspace_bytes(const SparseAttentionPlan& plan, int32_t n_items, int32_t head_dim);

/// One launch: every item attended, its o and lse written.
struct SparseAttentionParams {
  DType dtype = DType::kBFloat16;  ///< of q, k, v
  int32_t group = 1;               ///< G, query heads per KV head, in [1, 8]
  int32_t head_dim = 0;            ///< a multiple of 8 in [8, 256]
  float sm_scale = 0.0f;           ///< score scale (> 0)
  const SparseAttentionItem* items = nullptr;  ///< device-readable, n_items entries, read when the kernels run
  int32_t n_items = 0;
  SparseAttentionPlan plan;
  void* workspace = nullptr;  ///< device memory, 16-byte aligned, ≥ sparse_attention_workspace_bytes
  std::size_t workspace_bytes = 0;
};

/// Whether `p` can be launched (CUTLASS's can_implement): ok, or an error naming the field, its
/// value and what was expected. `host_items`, when given, is a host copy of the items to check too
/// (the launch itself cannot read them).
Status check_sparse_attention(const SparseAttentionParams& p, std::span<const SparseAttentionItem> host_items = {});

/// Enqueues the attention on `stream` (nothing when n_items = 0); returns the CUDA error code (0:
/// success), cudaErrorInvalidValue when check_sparse_attention(p) fails. Graph-capturable: no
/// allocation, no synchronization, parameters by value.
int launch_sparse_attention(const SparseAttentionParams& p, void* stream);

/// Loads every kernel launch_sparse_attention can take for `dtype` and `head_dim` (any plan), so
/// that no later launch (one inside a stream capture included) loads a module. Returns the CUDA error.
int load_sparse_attention_kernels(DType dtype, int32_t head_dim);

}  // namespace hgca::gpu
