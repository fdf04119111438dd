// The KV of one (layer, sequence): its window ring, and per KV head the DRAM store of every entry
// that left the window, with its MAW, its context set S and the context cache of S (S's K/V in a
// few long runs).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvmgr/context_segments.hpp"
#include "kvmgr/scalable.hpp"
#include "kvmgr/selection.hpp"
#include "kvmgr/store_memory.hpp"
#include "kvmgr/window.hpp"

namespace hgca::kvmgr {

/// block_tokens evicted entries of one KV head: K then V, [block_tokens, head_dim] each, in one span
/// of store memory. Immutable once stored, and shared, so an asynchronous re-evaluation reads them
/// while the store grows; the span goes back to its free list with the last reference.
struct StoreBlock {
  StoreSpan memory;
  std::size_t v_offset = 0;

  const std::byte* k() const { return memory.data(); }
  const std::byte* v() const { return memory.data() + v_offset; }
};
using StoreBlocks = ScalableVector<std::shared_ptr<const StoreBlock>>;

struct SelectionParams {
  float beta = 1.0f;
  int32_t min_keep = 0;
  int32_t heads_per_task = 1;
};

/// The context cache of one KV head: S's K rows and V rows, [|S|, D] each, in segments of store
/// memory (context_segments.hpp), so that the CPU reads what it attends to in a few long runs and a
/// device reads it through its host address. The first segment doubles (moving its rows) up to
/// segment_rows() rows; past that, segments are added and no row moves again.
class ContextCache {
 public:
  /// Rows of the first segment: the most rows of `row_bytes` that `first_segment_bytes`
  /// (StoreMemoryOptions::context_first_segment_bytes) holds, rounded down to a power of two (≥ 1).
  static int64_t segment_rows_for(std::size_t row_bytes, std::size_t first_segment_bytes);

  int64_t rows() const { return rows_; }
  int64_t capacity() const { return capacity_; }
  /// Rows of the first segment (0 before the first reserve).
  int64_t segment_rows() const { return segment_rows_; }
  int32_t segment_count() const { return static_cast<int32_t>(segments_.size()); }
  /// Segment s (< segment_count()): its rows per context_segment_first / context_segment_rows.
  KvSegment segment(int32_t s) const {
    return {segments_[s].span.data(), segments_[s].span.data() + segments_[s].v_offset};
  }
  /// Every segment, in store memory (device-readable where it is); null while there is one segment,
  /// whose rows are then all at k() and v().
  const KvSegment* segments() const { return table_ ? reinterpret_cast<const KvSegment*>(table_.data()) : nullptr; }
  /// The first segment's rows.
  const std::byte* k() const { return segments_.empty() ? nullptr : segments_[0].span.data(); }
  const std::byte* v() const { return segments_.empty() ? nullptr : segments_[0].span.data() + segments_[0].v_offset; }
  /// K / V row r (< capacity()).
  const std::byte* k_row(int64_t r) const { return row(r, false); }
  const std::byte* v_row(int64_t r) const { return row(r, true); }
  /// Whether a device can read every segment (and the segment table) through its host address.
  bool device_readable() const;

  /// Room for `rows` rows of `row_bytes` (the same at every call), the rows held kept. Throws
  /// StoreMemoryExhausted, leaving the cache as it was.
  void reserve(StoreMemory& memory, int node, int64_t rows, std::size_t row_bytes);
  /// The spans reserve() of `rows` takes from store memory: their sizes (as asked of
  /// StoreMemory::allocate) in the order it takes them. Empty when the capacity suffices.
  ScalableVector<std::size_t> spans_to_reserve(const StoreMemory& memory, int64_t rows, std::size_t row_bytes) const;
  /// reserve() with those spans allocated ahead: spans[i] of spans_to_reserve(...)[i] bytes (an empty
  /// one is allocated here).
  void reserve(StoreMemory& memory, int node, int64_t rows, std::size_t row_bytes, std::span<StoreSpan> spans);
  /// Appends `n` contiguous K rows and V rows (within capacity()).
  void push_back(const std::byte* k_rows, const std::byte* v_rows, int64_t n);
  void truncate(int64_t rows) { rows_ = std::min(rows_, rows); }

 private:
  struct Segment {
    StoreSpan span;  // K rows, then V rows at v_offset
    std::size_t v_offset = 0;
  };
  std::byte* row(int64_t r, bool v) const;
  /// What reserve(rows) adds: the first segment's rows (c0), the grown first segment's half
  /// (v_offset; 0: it stays), the added segments' halves, and whether the segment table is new.
  struct Growth {
    int64_t c0 = 0;
    std::size_t first_half = 0;
    ScalableVector<std::size_t> added_halves;
    bool table = false;
  };
  Growth growth(const StoreMemory& memory, int64_t rows, std::size_t row_bytes) const;

  ScalableVector<Segment> segments_;
  StoreSpan table_;  // KvSegment[kMaxContextSegments], from the second segment on
  std::size_t row_bytes_ = 0;
  int64_t segment_rows_ = 0;
  int64_t rows_ = 0, capacity_ = 0;
};

/// Everything evicted for one KV head, in token order.
struct HeadStore {
  StoreBlocks blocks;
  ScalableVector<float> maw;      ///< per entry, as it left the window (or as re-evaluated)
  ScalableVector<uint32_t> n_ref; ///< per entry: entries its weights were normalized over
  ContextSet context;             ///< S
  ContextCache context_cache;     ///< S's K/V, in segments

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
/// same for both backends (the CUDA backend's window lives on the GPU, its store here). Its blocks
/// and context caches live in `memory` on NUMA node `node`.
class DramStore {
 public:
  DramStore(int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim, std::size_t elem_size,
            std::shared_ptr<StoreMemory> memory, int node);

  int32_t n_kv_heads() const { return static_cast<int32_t>(stores_.size()); }
  int32_t block_tokens() const { return block_tokens_; }
  std::size_t head_row_bytes() const { return head_row_bytes_; }
  int node() const { return node_; }
  const StoreMemory& memory() const { return *memory_; }
  const HeadStore& store(int32_t h) const { return stores_[h]; }
  /// Entries in the store (the same for every KV head).
  int64_t size() const { return stores_.front().size(); }
  /// K / V row of store entry j of KV head h.
  const std::byte* k(int32_t h, int64_t j) const;
  const std::byte* v(int32_t h, int64_t j) const;

  /// Entries ready to join the store: their blocks, allocated (then filled by fill_append).
  struct PreparedAppend {
    ScalableVector<StoreBlocks> blocks;  // per KV head
    int64_t count = 0;
  };
  /// Token-major K and V rows [count, Hkv, D]: one contiguous piece of an append's entries.
  struct Rows {
    const std::byte* k = nullptr;
    const std::byte* v = nullptr;
    int64_t count = 0;
  };
  /// The blocks of an append of `count` entries (a multiple of block_tokens), from one call of
  /// the allocator. Reads nothing an append changes (MirroredKv::allocate_blocks calls it beside a
  /// scatter that may be running).
  PreparedAppend allocate_append(int64_t count) const;
  /// Room for the prepared entries and for what selection may add (lists, context caches); may
  /// fail, with no visible change.
  void make_room(const PreparedAppend& prepared, const SelectionParams& sel);
  /// The part of make_room that commit_unselected needs: room in the store's own lists, no context
  /// cache (heap memory only, not store memory).
  void make_entry_room(const PreparedAppend& prepared);
  /// Everything of an append of `count` entries that can fail, with no visible change.
  PreparedAppend prepare_append(int64_t count, const SelectionParams& sel) {
    PreparedAppend p = allocate_append(count);
    make_room(p, sel);
    return p;
  }
  /// Copies token-major rows, oldest first, from `pieces` into entries [first, first + their rows)
  /// of per-KV-head block lists laid out as the store's (entry e of head h in blocks[h][e /
  /// block_tokens]), runs of rows in parallel (in the caller's arena; make_room, commit_append and
  /// apply_reevaluation work per KV head there too). Cannot fail: without memory for the pool's
  /// tasks it copies in the calling thread.
  void fill_blocks(std::span<const StoreBlocks> blocks, int64_t first, std::span<const Rows> pieces) const;
  /// fill_blocks into the prepared blocks (prepared.count rows in all). Changes nothing visible.
  void fill_append(PreparedAppend& prepared, std::span<const Rows> pieces) const {
    fill_blocks(prepared.blocks, 0, pieces);
  }
  /// Appends the prepared entries with their MAW [Hkv, count], all judged against `n_ref`, then
  /// selects among them, and among those that joined unselected since the last selection.
  /// Strong guarantee: on an exception the store is as it was.
  void commit_append(PreparedAppend&& prepared, const float* maw, uint32_t n_ref, const SelectionParams& sel);
  /// commit_append without the selection, after make_entry_room: the entries join the store and S
  /// stays as it is until the next commit_append or re-evaluation judges them. Cannot fail. For
  /// entries that must leave the window when their context cache cannot grow: kept, not lost.
  void commit_unselected(PreparedAppend&& prepared, const float* maw, uint32_t n_ref) noexcept;
  void append(const std::byte* k_rows, const std::byte* v_rows, const float* maw, int64_t count,
              uint32_t n_ref, const SelectionParams& sel) {
    PreparedAppend p = prepare_append(count, sel);
    const Rows rows{k_rows, v_rows, count};
    fill_append(p, {&rows, 1});
    commit_append(std::move(p), maw, n_ref, sel);
  }

  /// Re-evaluation (§3.2.2): store entries [0, a[h].size()) take the appended queries' weights
  /// over the store as MAW, judged against n_ref = that size; then S is selected anew. Built aside
  /// and swapped in: on an exception the store is as it was.
  void apply_reevaluation(std::span<const std::vector<float>> a, const SelectionParams& sel);

 private:
  /// Admission from entry `from`, min_keep and padding over `heads` (stores_ or a copy being built),
  /// then their context caches follow S, with rows read from stores_' blocks; each run of
  /// heads_per_task heads in a task of its own.
  void select_from(std::vector<HeadStore>& heads, int64_t from, const SelectionParams& sel);
  void sync_context_cache(HeadStore& s, int32_t h);
  /// The entries join the store (within the room make_entry_room made), not judged.
  void append_entries(PreparedAppend&& prepared, const float* maw, uint32_t n_ref) noexcept;
  /// The first entry not judged since it joined (commit_unselected), or size() when none.
  int64_t unjudged_from() const { return unjudged_from_ >= 0 ? unjudged_from_ : size(); }

  int32_t block_tokens_;
  std::size_t head_row_bytes_;  // one KV head's row: head_dim × elem_size
  std::size_t block_v_offset_;  // V's offset in a block's span
  std::shared_ptr<StoreMemory> memory_;
  int node_;
  std::vector<HeadStore> stores_;
  int64_t unjudged_from_ = -1;  // -1: every entry has been judged
};

/// The host backend's KV of one (layer, sequence): its window ring in host memory and its store.
class SequenceKv {
 public:
  SequenceKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim,
             std::size_t elem_size, std::shared_ptr<StoreMemory> memory, int node);

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

  /// A commit with everything that can fail done: the MAW tracked aside, the evicted entries'
  /// blocks allocated and filled, room made in the store. The new rows stay the caller's.
  struct PreparedCommit {
    const std::byte* new_k = nullptr;
    const std::byte* new_v = nullptr;
    int64_t n_new = 0;
    int64_t evict = 0;
    std::vector<float> maw_of;       // [h][window entries, then new entries]
    std::vector<float> evicted_maw;  // [h][evicted entry]
    DramStore::PreparedAppend append;
    DramStore::PreparedAppend kept;  // the same blocks again, should selection fail in apply_commit
    bool select = true;              // false: the evicted entries join the store unselected
  };

  /// Ends an attention call whose dense part covered window ∪ new rows. `weights[h]` holds, for the
  /// window's entries oldest → newest and then the new rows, the `a` of Algorithm 1 line 8.
  /// Tracks MAW (window entries blend, new entries start at a), evicts the oldest whole blocks to
  /// the store with their MAW and n_ref = window size + n_new, selects among them, then inserts the
  /// remaining new rows. New rows are token-major [n_new, Hkv, D]. In two halves so that a batch
  /// prepares every sequence before any changes: prepare_commit does everything that can fail
  /// (strong guarantee on bad_alloc, StoreMemoryExhausted included) and changes nothing visible;
  /// apply_commit cannot fail: should selection's own scratch memory run out, the evicted entries
  /// join the store unselected, and it returns why (otherwise "").
  /// `reserved`: the evicted entries' blocks allocated ahead (DramStore::allocate_append of
  /// evict_count(n_new) entries), taken (left empty) once nothing can fail; otherwise they are
  /// allocated here. `select` false: no room is made in the context caches (store memory), and the
  /// evicted entries join the store unselected (a later re-evaluation may admit them).
  PreparedCommit prepare_commit(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                                std::span<const float* const> weights, float alpha,
                                const SelectionParams& sel, DramStore::PreparedAppend& reserved,
                                bool select = true);
  std::string apply_commit(PreparedCommit&& c, const SelectionParams& sel);
  std::string commit(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                     std::span<const float* const> weights, float alpha, const SelectionParams& sel) {
    DramStore::PreparedAppend none;
    return apply_commit(prepare_commit(new_k, new_v, n_new, weights, alpha, sel, none), sel);
  }

  void apply_reevaluation(std::span<const std::vector<float>> a, const SelectionParams& sel) {
    store_.apply_reevaluation(a, sel);
  }

 private:
  /// The oldest `evict` entries of window ∪ new rows, as at most three contiguous pieces (the
  /// window's two runs of slots, then new rows); returns how many.
  int evicted_pieces(const std::byte* new_k, const std::byte* new_v, int64_t evict,
                     std::array<DramStore::Rows, 3>& pieces) const;

  WindowRing window_;
  DramStore store_;
};

/// What MirroredKv::evict_and_insert throws when memory ran out once the new rows were in: the
/// evicted entries joined the store unselected. A report: nothing is lost.
class EvictedUnselected : public StoreMemoryExhausted {
 public:
  using StoreMemoryExhausted::StoreMemoryExhausted;
};

/// The CUDA backend's KV of one (layer, sequence) on the host: the rows of its window, which the
/// GPU attends in its own ring, as FlashD2H staged them, and its store. The rows wait in store
/// blocks: the store grows by whole blocks, so the window's oldest entry always starts one, and an
/// eviction hands the window's oldest blocks to the store as they are. Each row is copied once, from
/// staging into its KV head's block; the MAW is the GPU's.
class MirroredKv {
 public:
  MirroredKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim,
             std::size_t elem_size, std::shared_ptr<StoreMemory> memory, int node);

  const DramStore& dram() const { return store_; }
  DramStore& dram() { return store_; }
  int64_t window_size() const { return size_; }
  /// K / V row of KV head h of the window's i-th oldest entry.
  const std::byte* window_k(int32_t h, int64_t i) const;
  const std::byte* window_v(int32_t h, int64_t i) const;

  /// The blocks that n_new rows entering a window of `window_size` entries add (none when they fit
  /// in its last block), from one call of the allocator. The CUDA backend calls it ahead of the
  /// call (at begin_step, for the size the call will find), so that running out of store memory
  /// fails before anything leaves the GPU's window.
  DramStore::PreparedAppend allocate_blocks(int64_t window_size, int64_t n_new) const;
  /// Entries of the blocks allocate_blocks makes.
  int64_t allocate_count(int64_t window_size, int64_t n_new) const;

  /// The new rows [n_new, Hkv, D] enter the window; the oldest evict_count(n_new) entries of
  /// window ∪ new rows go to the store with `evicted_maw` [Hkv, evict] and n_ref = window size +
  /// n_new, and are selected. `blocks`: allocate_blocks(window_size(), n_new), made ahead (empty,
  /// or made for another size: made here). Strong guarantee on bad_alloc, but for memory running
  /// out once the rows are in (for the context caches, or selection's scratch): the entries still
  /// join the store, unselected, the window moves on, and then EvictedUnselected is thrown
  /// (nothing is lost, and the caller reports it).
  void evict_and_insert(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                        const float* evicted_maw, const SelectionParams& sel,
                        DramStore::PreparedAppend&& blocks = {});

 private:
  int64_t capacity_;
  int64_t size_ = 0;
  DramStore store_;
  ScalableVector<StoreBlocks> blocks_;  // per KV head: the window's, ceil(size_ / block_tokens) of them
};

}  // namespace hgca::kvmgr
