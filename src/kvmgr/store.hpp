// The KV of one (layer, sequence): its window ring, and per KV head the DRAM store of every entry
// that left the window, with its MAW, its context set S and the contiguous context cache of S.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvmgr/selection.hpp"
#include "kvmgr/window.hpp"

namespace hgca::kvmgr {

/// block_tokens evicted entries of one KV head: K and V [block_tokens, head_dim]. Immutable once
/// stored, and shared, so an asynchronous re-evaluation reads them while the store grows.
struct StoreBlock {
  std::vector<std::byte> k, v;
};
using StoreBlocks = std::vector<std::shared_ptr<const StoreBlock>>;

struct SelectionParams {
  float beta = 1.0f;
  int32_t min_keep = 0;
  int32_t heads_per_task = 1;
};

/// Everything evicted for one KV head, in token order.
struct HeadStore {
  StoreBlocks blocks;
  std::vector<float> maw;         ///< per entry, as it left the window (or as re-evaluated)
  std::vector<uint32_t> n_ref;    ///< per entry: entries its weights were normalized over
  ContextSet context;             ///< S
  std::vector<std::byte> context_k, context_v;  ///< the context cache: S's K/V, contiguous [|S|, D]

  int64_t size() const { return static_cast<int64_t>(maw.size()); }
};

/// Entries that n_new tokens push out of a window holding `size` of `capacity`: 0 if they fit,
/// else the fewest whole blocks that make room (the rule of both backends).
inline int64_t evict_count(int64_t size, int64_t capacity, int64_t n_new, int32_t block_tokens) {
  const int64_t over = size + n_new - capacity;
  if (over <= 0) return 0;
  return (over + block_tokens - 1) / block_tokens * block_tokens;
}

/// Every entry that left the window of one (layer, sequence), per KV head, in token order; the
/// same for both backends (the CUDA backend's window lives on the GPU, its store here).
class DramStore {
 public:
  DramStore(int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim, std::size_t elem_size);

  int32_t n_kv_heads() const { return static_cast<int32_t>(stores_.size()); }
  int32_t block_tokens() const { return block_tokens_; }
  const HeadStore& store(int32_t h) const { return stores_[h]; }
  /// Entries in the store (the same for every KV head).
  int64_t size() const { return stores_.front().size(); }
  /// K / V row of store entry j of KV head h.
  const std::byte* k(int32_t h, int64_t j) const;
  const std::byte* v(int32_t h, int64_t j) const;

  /// Appends `count` (a multiple of block_tokens) evicted entries, token-major K and V rows
  /// [count, Hkv, D] and their MAW [Hkv, count], all judged against `n_ref`; then selects among
  /// them. The blocks are allocated before any state changes, so bad_alloc there loses nothing.
  void append(const std::byte* k_rows, const std::byte* v_rows, const float* maw, int64_t count,
              uint32_t n_ref, const SelectionParams& sel);

  /// Re-evaluation (§3.2.2): store entries [0, a[h].size()) take the appended queries' weights
  /// over the store as MAW, judged against n_ref = that size; then S is selected anew.
  void apply_reevaluation(std::span<const std::vector<float>> a, const SelectionParams& sel);

 private:
  void select_from(int64_t from, const SelectionParams& sel);
  void sync_context_cache(HeadStore& s) const;

  int32_t block_tokens_;
  std::size_t head_row_bytes_;  // one KV head's row: head_dim × elem_size
  std::vector<HeadStore> stores_;
};

/// The host backend's KV of one (layer, sequence): its window ring in host memory and its store.
class SequenceKv {
 public:
  SequenceKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim,
             std::size_t elem_size);

  const WindowRing& window() const { return window_; }
  const DramStore& dram() const { return store_; }
  DramStore& dram() { return store_; }
  int32_t n_kv_heads() const { return store_.n_kv_heads(); }
  const HeadStore& store(int32_t h) const { return store_.store(h); }
  int64_t store_size() const { return store_.size(); }
  const std::byte* store_k(int32_t h, int64_t j) const { return store_.k(h, j); }
  const std::byte* store_v(int32_t h, int64_t j) const { return store_.v(h, j); }

  /// Entries the attention call's n_new tokens push out of the window: 0 if they fit, else the
  /// fewest whole blocks that make room.
  int64_t evict_count(int64_t n_new) const { return kvmgr::evict_count(window_.size(), window_.capacity(), n_new, store_.block_tokens()); }

  /// Ends an attention call whose dense part covered window ∪ new rows. `weights[h]` holds, for the
  /// window's entries oldest → newest and then the new rows, the `a` of Algorithm 1 line 8.
  /// Tracks MAW (window entries blend, new entries start at a), evicts the oldest whole blocks to
  /// the store with their MAW and n_ref = window size + n_new, selects among them, then inserts the
  /// remaining new rows. New rows are token-major [n_new, Hkv, D]. Strong guarantee on bad_alloc.
  void commit(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
              std::span<const float* const> weights, float alpha, const SelectionParams& sel);

  /// The part of commit() that moves KV, for a window whose MAW is tracked elsewhere (the CUDA
  /// backend keeps its window on the GPU and this one as the host's copy of it, FlashD2H): the
  /// oldest evict_count(n_new) entries of window ∪ new rows go to the store with `evicted_maw`
  /// [Hkv, evict] and n_ref = window size + n_new, and are selected; the remaining new rows enter
  /// the window (their MAW is left as it is). Strong guarantee on bad_alloc.
  void evict_and_insert(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                        const float* evicted_maw, const SelectionParams& sel);

  void apply_reevaluation(std::span<const std::vector<float>> a, const SelectionParams& sel) {
    store_.apply_reevaluation(a, sel);
  }

 private:
  WindowRing window_;
  DramStore store_;
};

}  // namespace hgca::kvmgr
