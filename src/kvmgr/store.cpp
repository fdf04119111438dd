// Insert, evict, track and select for one (layer, sequence) (DESIGN.md steps 1–3, 6, 7).
#include "kvmgr/store.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hgca::kvmgr {
namespace {

std::size_t align_up(std::size_t n) {
  return (n + StoreMemory::kAlignment - 1) / StoreMemory::kAlignment * StoreMemory::kAlignment;
}

/// Copies `n` bytes (whole cache lines, `dst` on a 16-byte boundary) with non-temporal stores
/// (StoreWrites::kStreamed); stream_fence() orders them before whatever publishes the rows.
void stream_copy(std::byte* dst, const std::byte* src, std::size_t n) {
#if defined(__SSE2__)
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* s = reinterpret_cast<const __m128i*>(src);
  for (std::size_t i = 0; i < n / sizeof(__m128i); ++i) _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
#else
  std::memcpy(dst, src, n);
#endif
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/// Whether bulk rows of `row_bytes` go in with stream_copy: the store memory says so (StoreWrites)
/// and the rows are whole cache lines.
bool streams(const StoreMemory& memory, std::size_t row_bytes) {
  return row_bytes % 64 == 0 && memory.streams_rows();
}

/// stream_copy when `stream`, else memcpy.
void copy_bytes(std::byte* dst, const std::byte* src, std::size_t n, bool stream) {
  if (stream) stream_copy(dst, src, n);
  else std::memcpy(dst, src, n);
}

/// Room for n elements, growing geometrically (reserve alone would grow by exactly what each
/// append needs, copying the whole list every time).
template <typename Vector>
void grow_capacity(Vector& v, std::size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

/// body(first, last) for each run of `per_task` KV heads, the runs in parallel in the caller's
/// arena: each head's store is its own, so one sequence's append keeps several threads busy (a
/// decode step has few sequences); a run's heads are padded together (§3.3), so they stay in one task.
template <typename F>
void for_each_head_run(int32_t hkv, int32_t per_task, F&& body) {
  const int32_t run = std::max(per_task, 1);
  tbb::parallel_for(int32_t{0}, (hkv + run - 1) / run, [&](int32_t r) { body(r * run, std::min(hkv, (r + 1) * run)); });
}

}  // namespace

// ---- ContextCache ----

int64_t ContextCache::segment_rows_for(std::size_t row_bytes, std::size_t first_segment_bytes) {
  return static_cast<int64_t>(std::bit_floor(std::max<std::size_t>(first_segment_bytes / row_bytes, 1)));
}

std::byte* ContextCache::row(int64_t r, bool v) const {
  const int32_t s = context_segment_of(r, segment_rows_);
  const Segment& seg = segments_[s];
  return seg.span.data() + (v ? seg.v_offset : 0) +
         static_cast<std::size_t>(r - context_segment_first(s, segment_rows_)) * row_bytes_;
}

bool ContextCache::device_readable() const {
  if (table_ && !table_.device_readable()) return false;
  return std::all_of(segments_.begin(), segments_.end(), [](const Segment& s) { return s.span.device_readable(); });
}

ContextCache::Growth ContextCache::growth(const StoreMemory& memory, int64_t rows, std::size_t row_bytes) const {
  Growth g;
  if (rows <= capacity_) return g;
  assert(segment_rows_ == 0 || row_bytes == row_bytes_);
  g.c0 = segment_rows_ > 0 ? segment_rows_ : segment_rows_for(row_bytes, memory.options().context_first_segment_bytes);
  const int64_t first_rows = std::min(capacity_, g.c0);  // 0 while the cache is empty
  if (first_rows < std::min(rows, g.c0)) {
    // Halves a power of two of at least 2 KiB while they grow, so that spans come in few sizes and
    // the chunks that serve them are reused; the full first segment exactly c0 rows.
    const std::size_t full = static_cast<std::size_t>(g.c0) * row_bytes;
    g.first_half = std::min(full, std::bit_ceil(std::max<std::size_t>(static_cast<std::size_t>(std::min(rows, g.c0)) * row_bytes, 2048)));
  }
  for (int32_t s = std::max(segment_count(), 1); context_segment_first(s, g.c0) < rows; ++s) {
    if (s >= kMaxContextSegments) throw StoreMemoryExhausted(fmt::format("a context cache of {} rows, past its {} segments", rows, kMaxContextSegments));
    g.added_halves.push_back(static_cast<std::size_t>(context_segment_rows(s, g.c0)) * row_bytes);
  }
  g.table = !g.added_halves.empty() && !table_;
  return g;
}

ScalableVector<std::size_t> ContextCache::spans_to_reserve(const StoreMemory& memory, int64_t rows, std::size_t row_bytes) const {
  const Growth g = growth(memory, rows, row_bytes);
  ScalableVector<std::size_t> sizes;
  if (g.first_half > 0) sizes.push_back(2 * g.first_half);
  for (const std::size_t half : g.added_halves) sizes.push_back(2 * half);
  if (g.table) sizes.push_back(sizeof(KvSegment) * kMaxContextSegments);
  return sizes;
}

void ContextCache::reserve(StoreMemory& memory, int node, int64_t rows, std::size_t row_bytes) {
  reserve(memory, node, rows, row_bytes, {});
}

void ContextCache::reserve(StoreMemory& memory, int node, int64_t rows, std::size_t row_bytes,
                           std::span<StoreSpan> spans) {
  const Growth g = growth(memory, rows, row_bytes);
  if (g.c0 == 0) return;  // the capacity suffices
  // Everything that can fail first, into locals: the cache changes only once all of it is had.
  std::size_t next = 0;  // spans[next]: the next one taken
  auto take = [&](std::size_t bytes) {
    StoreSpan span = next < spans.size() ? std::move(spans[next]) : StoreSpan{};
    ++next;
    return span ? std::move(span) : memory.allocate(node, bytes);
  };
  Segment first;  // the first segment, grown
  if (g.first_half > 0) {
    first.v_offset = g.first_half;
    first.span = take(2 * first.v_offset);
  }
  ScalableVector<Segment> added(g.added_halves.size());
  for (std::size_t i = 0; i < added.size(); ++i) {
    added[i].v_offset = g.added_halves[i];
    added[i].span = take(2 * added[i].v_offset);
  }
  StoreSpan table = g.table ? take(sizeof(KvSegment) * kMaxContextSegments) : StoreSpan{};
  segments_.reserve(std::max<std::size_t>(segments_.size(), 1) + added.size());

  row_bytes_ = row_bytes;
  segment_rows_ = g.c0;
  if (first.span) {
    if (rows_ > 0) {
      // Once the store memory outgrows the last-level cache the rows are streamed, as bulk rows into
      // blocks are (StoreWrites): the new span's lines are not read for ownership first.
      const std::size_t bytes = static_cast<std::size_t>(rows_) * row_bytes;
      const bool stream = streams(memory, row_bytes);
      copy_bytes(first.span.data(), k(), bytes, stream);
      copy_bytes(first.span.data() + first.v_offset, v(), bytes, stream);
      if (stream) stream_fence();
    }
    if (segments_.empty()) segments_.push_back(std::move(first));
    else segments_[0] = std::move(first);
  }
  const int32_t listed = table ? 0 : segment_count();  // the table's entries written already
  if (table) table_ = std::move(table);
  for (Segment& seg : added) segments_.push_back(std::move(seg));
  if (segments_.size() > 1) {
    // Listed entries are never written again (their rows never move): a device reading the table
    // while the cache grows sees them as they were.
    auto* entries = reinterpret_cast<KvSegment*>(table_.data());
    for (int32_t s = listed; s < segment_count(); ++s) entries[s] = segment(s);
    capacity_ = context_segment_first(segment_count(), g.c0);
  } else {
    capacity_ = static_cast<int64_t>(segments_[0].v_offset / row_bytes);
  }
}

void ContextCache::push_back(const std::byte* k_rows, const std::byte* v_rows, int64_t n) {
  assert(rows_ + n <= capacity_);
  while (n > 0) {
    // The rest of the segment holding row rows_ (of the first segment: its capacity).
    const int32_t s = context_segment_of(rows_, segment_rows_);
    const int64_t take = std::min(n, std::min(capacity_, context_segment_end(s, segment_rows_)) - rows_);
    const std::size_t bytes = static_cast<std::size_t>(take) * row_bytes_;
    const Segment& seg = segments_[s];
    std::byte* k =
        seg.span.data() + static_cast<std::size_t>(rows_ - context_segment_first(s, segment_rows_)) * row_bytes_;
    std::memcpy(k, k_rows, bytes);
    std::memcpy(k + seg.v_offset, v_rows, bytes);
    k_rows += bytes;
    v_rows += bytes;
    rows_ += take;
    n -= take;
  }
}

// ---- DramStore ----

DramStore::DramStore(int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim, std::size_t elem_size,
                     std::shared_ptr<StoreMemory> memory, int node)
    : block_tokens_(block_tokens),
      head_row_bytes_(static_cast<std::size_t>(head_dim) * elem_size),
      block_v_offset_(align_up(block_tokens * head_row_bytes_)),
      memory_(std::move(memory)),
      node_(node),
      stores_(static_cast<std::size_t>(n_kv_heads)) {}

const std::byte* DramStore::k(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->k() + (j % block_tokens_) * head_row_bytes_;
}

const std::byte* DramStore::v(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->v() + (j % block_tokens_) * head_row_bytes_;
}

DramStore::PreparedAppend DramStore::allocate_append(int64_t count) const {
  PreparedAppend p;
  p.count = count;
  if (count == 0) return p;
  assert(count % block_tokens_ == 0);
  const int32_t hkv = n_kv_heads();
  const int64_t n_blocks = count / block_tokens_;

  // Every block of the append from one call of the allocator (one lock, not one per block). One the
  // store can never hold fails before its lists are made: a block's span, shared block and list
  // entries (about 200 bytes) count too, as much as its rows where blocks are short.
  constexpr std::size_t kBlockBookkeeping = sizeof(StoreSpan) + 2 * sizeof(std::shared_ptr<const StoreBlock>) + 64;
  memory_->check_request(node_, 2 * block_v_offset_, static_cast<std::size_t>(hkv * n_blocks),
                         kBlockBookkeeping + sizeof(StoreBlock));
  ScalableVector<StoreSpan> spans(static_cast<std::size_t>(hkv * n_blocks));
  memory_->allocate(node_, 2 * block_v_offset_, spans);
  p.blocks.resize(static_cast<std::size_t>(hkv));
  for (int32_t h = 0; h < hkv; ++h) {
    p.blocks[h].reserve(static_cast<std::size_t>(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) {
      auto block = std::allocate_shared<StoreBlock>(tbb::scalable_allocator<StoreBlock>{});
      block->memory = std::move(spans[h * n_blocks + b]);
      block->v_offset = block_v_offset_;
      p.blocks[h].push_back(std::move(block));
    }
  }
  return p;
}

void DramStore::make_room(const PreparedAppend& prepared, const SelectionParams& sel) {
  const int64_t count = prepared.count;
  if (count == 0) return;
  const int32_t hkv = n_kv_heads();
  const int64_t m = size() + count;
  // Room for what commit_append adds. S grows by at most the entries it judges (the new ones, and
  // those that joined unselected before) or to min_keep, and padding takes every head of a task
  // to the longest of them.
  const int64_t judged = m - unjudged_from();
  ScalableVector<int64_t> rows(static_cast<std::size_t>(hkv));
  for (int32_t h = 0; h < hkv; ++h) {
    rows[h] = std::min(m, std::max(stores_[h].context.size() + judged, std::min<int64_t>(sel.min_keep, m)));
  }
  const auto per_task = static_cast<std::size_t>(std::max(sel.heads_per_task, 1));
  for (std::size_t first = 0; first < rows.size(); first += per_task) {
    const auto last = rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), first + per_task));
    const int64_t longest = *std::max_element(rows.begin() + static_cast<std::ptrdiff_t>(first), last);
    std::fill(rows.begin() + static_cast<std::ptrdiff_t>(first), last, longest);
  }
  make_entry_room(prepared);
  // The caches' new spans, those of one size for every head from one call of the allocator: the
  // heads of young stores grow in the same steps, and with one call per span the scatter's threads
  // queued for its lock (bench/results/session31).
  ScalableVector<ScalableVector<StoreSpan>> spans(static_cast<std::size_t>(hkv));
  struct Want {
    std::size_t bytes;
    int32_t h, i;
  };
  ScalableVector<Want> wants;
  for (int32_t h = 0; h < hkv; ++h) {
    const ScalableVector<std::size_t> sizes = stores_[h].context_cache.spans_to_reserve(*memory_, rows[h], head_row_bytes_);
    spans[h].resize(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) wants.push_back({sizes[i], h, static_cast<int32_t>(i)});
  }
  std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) { return a.bytes < b.bytes; });
  ScalableVector<StoreSpan> batch;
  for (std::size_t w0 = 0, w1 = 0; w0 < wants.size(); w0 = w1) {
    while (w1 < wants.size() && wants[w1].bytes == wants[w0].bytes) ++w1;
    batch.resize(w1 - w0);
    memory_->allocate(node_, wants[w0].bytes, batch);
    for (std::size_t w = w0; w < w1; ++w) spans[wants[w].h][wants[w].i] = std::move(batch[w - w0]);
  }
  // A growing context cache copies what it holds: per head, in parallel.
  for_each_head_run(hkv, 1, [&](int32_t h, int32_t) {
    auto& s = stores_[h];
    grow_capacity(s.context.member, static_cast<std::size_t>(m));
    grow_capacity(s.context.indices, static_cast<std::size_t>(rows[h]));
    s.context_cache.reserve(*memory_, node_, rows[h], head_row_bytes_, spans[h]);
  });
}

void DramStore::make_entry_room(const PreparedAppend& prepared) {
  const int64_t n_blocks = prepared.count / block_tokens_;
  const auto m = static_cast<std::size_t>(size() + prepared.count);
  for (auto& s : stores_) {
    grow_capacity(s.blocks, s.blocks.size() + n_blocks);
    grow_capacity(s.maw, m);
    grow_capacity(s.n_ref, m);
  }
}

void DramStore::fill_blocks(std::span<const StoreBlocks> blocks, int64_t first, std::span<const Rows> pieces) const {
  const int32_t hkv = n_kv_heads();
  const std::size_t token_row_bytes = head_row_bytes_ * hkv;
  int64_t count = 0;
  for (const Rows& piece : pieces) count += piece.count;
  // Runs of rows in parallel, so that an append of one block still keeps several threads busy (a
  // decode step's row is copied right here). Bulk rows of whole cache lines (blocks start on one)
  // are streamed when the store memory says so (StoreWrites); a decode step's few rows stay cached.
  constexpr int64_t kRowsPerTask = 16;
  const bool stream = count > kRowsPerTask && streams(*memory_, head_row_bytes_);
  // Rows [t, end), read front to back, every head's row to its block (head by head, each block
  // written front to back, measured slower: bench/results/flash-transfer/mirrored-windows).
  auto copy_rows = [&](int64_t t, int64_t end) {
    std::size_t p = 0;
    int64_t r = t;  // row t within pieces[p]
    while (r >= pieces[p].count) r -= pieces[p++].count;
    for (; t < end; ++t, ++r) {
      if (r == pieces[p].count) {
        ++p;
        r = 0;
      }
      const int64_t e = first + t;  // the row's entry
      const std::size_t at = static_cast<std::size_t>(e % block_tokens_) * head_row_bytes_;
      const auto b = static_cast<std::size_t>(e / block_tokens_);
      const std::byte* k = pieces[p].k + r * token_row_bytes;
      const std::byte* v = pieces[p].v + r * token_row_bytes;
      for (int32_t h = 0; h < hkv; ++h) {
        std::byte* dst = blocks[h][b]->memory.data() + at;
        copy_bytes(dst, k + h * head_row_bytes_, head_row_bytes_, stream);
        copy_bytes(dst + block_v_offset_, v + h * head_row_bytes_, head_row_bytes_, stream);
      }
    }
    if (stream) stream_fence();
  };
  if (count <= kRowsPerTask) {
    copy_rows(0, count);
    return;
  }
  try {
    tbb::parallel_for(int64_t{0}, (count + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t task) {
      copy_rows(task * kRowsPerTask, std::min(count, (task + 1) * kRowsPerTask));
    });
  } catch (const std::bad_alloc&) {
    // No memory for the pool's tasks: the copies (which may be redone) in this thread, so that
    // evicted entries are never left behind.
    copy_rows(0, count);
  }
}

void DramStore::commit_append(PreparedAppend&& prepared, const float* maw, uint32_t n_ref,
                              const SelectionParams& sel) {
  const int64_t count = prepared.count;
  if (count == 0) return;
  const int32_t hkv = n_kv_heads();
  const int64_t from = size();
  struct Mark {
    std::size_t blocks, context;
    int64_t cached;
  };
  ScalableVector<Mark> marks;
  marks.reserve(static_cast<std::size_t>(hkv));
  for (const auto& s : stores_) marks.push_back({s.blocks.size(), s.context.indices.size(), s.context_cache.rows()});
  try {
    append_entries(std::move(prepared), maw, n_ref);
    select_from(stores_, std::min(from, unjudged_from()), sel);
  } catch (...) {
    for (int32_t h = 0; h < hkv; ++h) {
      auto& s = stores_[h];
      const Mark& mark = marks[h];
      s.blocks.erase(s.blocks.begin() + static_cast<std::ptrdiff_t>(mark.blocks), s.blocks.end());
      s.maw.resize(static_cast<std::size_t>(from));
      s.n_ref.resize(static_cast<std::size_t>(from));
      for (std::size_t c = mark.context; c < s.context.indices.size(); ++c) s.context.member[s.context.indices[c]] = 0;
      s.context.indices.resize(mark.context);
      s.context.member.resize(std::min(s.context.member.size(), static_cast<std::size_t>(from)));
      s.context_cache.truncate(mark.cached);
    }
    throw;
  }
  unjudged_from_ = -1;
}

void DramStore::commit_unselected(PreparedAppend&& prepared, const float* maw, uint32_t n_ref) noexcept {
  if (unjudged_from_ < 0) unjudged_from_ = size();
  append_entries(std::move(prepared), maw, n_ref);
}

void DramStore::append_entries(PreparedAppend&& prepared, const float* maw, uint32_t n_ref) noexcept {
  const int64_t count = prepared.count;
  for (int32_t h = 0; h < n_kv_heads(); ++h) {  // within the capacity make_entry_room reserved
    auto& s = stores_[h];
    for (auto& block : prepared.blocks[h]) s.blocks.push_back(std::move(block));
    s.maw.insert(s.maw.end(), maw + h * count, maw + (h + 1) * count);
    s.n_ref.insert(s.n_ref.end(), count, n_ref);
  }
}

void DramStore::apply_reevaluation(std::span<const std::vector<float>> a, const SelectionParams& sel) {
  std::vector<HeadStore> next(stores_.size());
  for (int32_t h = 0; h < n_kv_heads(); ++h) {
    const auto& s = stores_[h];
    const auto m0 = static_cast<uint32_t>(a[h].size());
    assert(m0 <= s.maw.size());
    next[h].maw = s.maw;
    next[h].n_ref = s.n_ref;
    std::copy(a[h].begin(), a[h].end(), next[h].maw.begin());
    std::fill_n(next[h].n_ref.begin(), m0, m0);
  }
  select_from(next, 0, sel);
  for (int32_t h = 0; h < n_kv_heads(); ++h) {
    auto& s = stores_[h];
    s.maw.swap(next[h].maw);
    s.n_ref.swap(next[h].n_ref);
    std::swap(s.context, next[h].context);
    std::swap(s.context_cache, next[h].context_cache);
  }
  unjudged_from_ = -1;
}

void DramStore::select_from(std::vector<HeadStore>& heads, int64_t from, const SelectionParams& sel) {
  // Heads merged into one CPU task are padded to the longest context set among them (§3.3).
  for_each_head_run(static_cast<int32_t>(heads.size()), sel.heads_per_task, [&](int32_t first, int32_t last) {
    int64_t target = 0;
    for (int32_t h = first; h < last; ++h) {
      auto& s = heads[h];
      admit_passing(s.maw, s.n_ref, sel.beta, from, s.context);
      top_up(s.maw, s.n_ref, sel.min_keep, s.context);
      target = std::max(target, s.context.size());
    }
    for (int32_t h = first; h < last; ++h) top_up(heads[h].maw, heads[h].n_ref, target, heads[h].context);
    for (int32_t h = first; h < last; ++h) sync_context_cache(heads[h], h);
  });
}

void DramStore::sync_context_cache(HeadStore& s, int32_t h) {
  s.context_cache.reserve(*memory_, node_, s.context.size(), head_row_bytes_);
  const auto& indices = s.context.indices;
  for (int64_t c = s.context_cache.rows(); c < s.context.size();) {
    // A run of consecutive entries of one block is one copy (admission appends in store order).
    const uint32_t j = indices[c];
    int64_t n = 1;
    while (c + n < s.context.size() && indices[c + n] == j + n && (j + n) % block_tokens_ != 0) ++n;
    s.context_cache.push_back(k(h, j), v(h, j), n);
    c += n;
  }
}

SequenceKv::SequenceKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads,
                       int32_t head_dim, std::size_t elem_size, std::shared_ptr<StoreMemory> memory,
                       int node)
    : window_(window_tokens, n_kv_heads, head_dim, elem_size),
      store_(block_tokens, n_kv_heads, head_dim, elem_size, std::move(memory), node) {}

SequenceKv::PreparedCommit SequenceKv::prepare_commit(const std::byte* new_k, const std::byte* new_v,
                                                      int64_t n_new, std::span<const float* const> weights,
                                                      float alpha, const SelectionParams& sel,
                                                      DramStore::PreparedAppend& reserved, bool select) {
  PreparedCommit c;
  c.select = select;
  c.new_k = new_k;
  c.new_v = new_v;
  c.n_new = n_new;
  c.evict = evict_count(n_new);
  const int64_t w = window_.size();
  const int32_t hkv = n_kv_heads();

  // Track: window entries blend their MAW, new entries start at their first observed weight.
  // Computed aside and written back only once the store has taken the evicted entries.
  c.maw_of.resize(static_cast<std::size_t>((w + n_new) * hkv));  // [h][entry]
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = 0; i < w; ++i) {
      c.maw_of[h * (w + n_new) + i] = update_maw(window_.maw(h, window_.slot(i)), weights[h][i], alpha);
    }
    for (int64_t i = 0; i < n_new; ++i) c.maw_of[h * (w + n_new) + w + i] = weights[h][w + i];
  }

  // Evict: the oldest `evict` entries (window first, then new rows) go to the store with their MAW.
  if (c.evict > 0) {
    c.evicted_maw.resize(static_cast<std::size_t>(c.evict * hkv));
    for (int32_t h = 0; h < hkv; ++h) {
      std::copy_n(c.maw_of.begin() + h * (w + n_new), c.evict, c.evicted_maw.begin() + h * c.evict);
    }
    const bool take = reserved.count == c.evict;
    DramStore::PreparedAppend allocated = take ? DramStore::PreparedAppend{} : store_.allocate_append(c.evict);
    DramStore::PreparedAppend& blocks = take ? reserved : allocated;
    if (select) {
      store_.make_room(blocks, sel);
      c.kept.count = c.evict;
      c.kept.blocks = blocks.blocks;
    } else {
      store_.make_entry_room(blocks);
    }
    c.append = std::exchange(blocks, {});
    std::array<DramStore::Rows, 3> pieces;
    store_.fill_append(c.append, std::span(pieces.data(), static_cast<std::size_t>(evicted_pieces(new_k, new_v, c.evict, pieces))));
  }
  return c;
}

int SequenceKv::evicted_pieces(const std::byte* new_k, const std::byte* new_v, int64_t evict,
                               std::array<DramStore::Rows, 3>& pieces) const {
  int n = 0;
  int64_t left = evict;
  for (const WindowRing::Run& run : window_.runs()) {
    const int64_t rows = std::min(run.count, left);
    if (rows > 0) pieces[n++] = {window_.k(run.first_slot), window_.v(run.first_slot), rows};
    left -= rows;
  }
  if (left > 0) pieces[n++] = {new_k, new_v, left};
  return n;
}

std::string SequenceKv::apply_commit(PreparedCommit&& c, const SelectionParams& sel) {
  const int64_t w = window_.size();
  const int64_t n_new = c.n_new;
  const int32_t hkv = n_kv_heads();
  const std::size_t token_row_bytes = window_.row_bytes();
  const auto n_ref = static_cast<uint32_t>(w + n_new);
  std::string unselected;
  if (c.evict > 0) {
    bool selected = false;
    if (c.select) {
      try {
        store_.commit_append(std::move(c.append), c.evicted_maw.data(), n_ref, sel);
        selected = true;
      } catch (const std::bad_alloc& e) {  // selection's scratch; commit_append undid itself
        try {
          unselected = e.what();
        } catch (...) {
          unselected = "out of memory";  // fits the string's own storage
        }
      }
    }
    // Within the room prepare_commit made in the store's own lists.
    if (!selected) store_.commit_unselected(std::move(c.select ? c.kept : c.append), c.evicted_maw.data(), n_ref);
  }

  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = 0; i < w; ++i) window_.maw(h, window_.slot(i)) = c.maw_of[h * (w + n_new) + i];
  }
  const int64_t keep_from = std::max<int64_t>(0, c.evict - w);  // first new row that stays
  window_.pop_front(std::min(c.evict, w));
  const int64_t first_new_slot = window_.size();
  window_.push_back(c.new_k + keep_from * token_row_bytes, c.new_v + keep_from * token_row_bytes,
                    n_new - keep_from);
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = keep_from; i < n_new; ++i) {
      window_.maw(h, window_.slot(first_new_slot + i - keep_from)) = c.maw_of[h * (w + n_new) + w + i];
    }
  }
  return unselected;
}

MirroredKv::MirroredKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim,
                       std::size_t elem_size, std::shared_ptr<StoreMemory> memory, int node)
    : capacity_(window_tokens),
      store_(block_tokens, n_kv_heads, head_dim, elem_size, std::move(memory), node),
      blocks_(static_cast<std::size_t>(n_kv_heads)) {}

const std::byte* MirroredKv::window_k(int32_t h, int64_t i) const {
  const int32_t bt = store_.block_tokens();
  return blocks_[h][i / bt]->k() + (i % bt) * store_.head_row_bytes();
}

const std::byte* MirroredKv::window_v(int32_t h, int64_t i) const {
  const int32_t bt = store_.block_tokens();
  return blocks_[h][i / bt]->v() + (i % bt) * store_.head_row_bytes();
}

int64_t MirroredKv::allocate_count(int64_t window_size, int64_t n_new) const {
  const int64_t bt = store_.block_tokens();
  return ((window_size + n_new + bt - 1) / bt - (window_size + bt - 1) / bt) * bt;
}

DramStore::PreparedAppend MirroredKv::allocate_blocks(int64_t window_size, int64_t n_new) const {
  return store_.allocate_append(allocate_count(window_size, n_new));
}

void MirroredKv::evict_and_insert(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                                  const float* evicted_maw, const SelectionParams& sel,
                                  DramStore::PreparedAppend&& blocks) {
  const int32_t bt = store_.block_tokens();
  const int32_t hkv = store_.n_kv_heads();
  const int64_t evict = evict_count(size_, capacity_, n_new, bt);
  const auto evict_blocks = static_cast<std::ptrdiff_t>(evict / bt);
  const auto n_ref = static_cast<uint32_t>(size_ + n_new);
  // Blocks made ahead for another window size (a graph launched again) are not these: made here.
  if (blocks.count != allocate_count(size_, n_new)) blocks = allocate_blocks(size_, n_new);

  // The rows land after the window's entries: in its last block's free rows, then the new blocks.
  // (Room in the lists first: nothing changes before what can fail has.)
  const auto added = static_cast<std::size_t>(blocks.count / bt);  // per KV head (none: no lists)
  for (int32_t h = 0; h < hkv; ++h) blocks_[h].reserve(blocks_[h].size() + added);
  auto insert = [&] {
    for (int32_t h = 0; h < hkv && added > 0; ++h) {
      for (auto& block : blocks.blocks[h]) blocks_[h].push_back(std::move(block));
    }
    const DramStore::Rows rows{new_k, new_v, n_new};
    store_.fill_blocks(blocks_, size_, {&rows, 1});
  };
  if (evict == 0) {  // most decode steps
    insert();
    size_ += n_new;
    return;
  }

  // What can fail, before anything changes: the evicted blocks' lists (twice: `kept` holds them
  // too, should selection fail), room in the store's lists and context caches.
  DramStore::PreparedAppend evicted, kept;
  for (DramStore::PreparedAppend* p : {&evicted, &kept}) {
    p->count = evict;
    p->blocks.resize(static_cast<std::size_t>(hkv));
    for (StoreBlocks& b : p->blocks) b.reserve(static_cast<std::size_t>(evict_blocks));
  }
  std::string unselected;  // why the evicted entries join the store unselected, if they do
  try {
    store_.make_room(evicted, sel);
  } catch (const StoreMemoryExhausted& e) {
    // Only S's cache cannot grow: the GPU's window has already moved on, so the entries join the
    // store unselected rather than be lost.
    store_.make_entry_room(evicted);
    unselected = e.what();
  }

  insert();
  // The oldest blocks leave the window as they are (within the capacity reserved above).
  for (int32_t h = 0; h < hkv; ++h) {
    auto& window = blocks_[h];
    evicted.blocks[h].assign(window.begin(), window.begin() + evict_blocks);
    kept.blocks[h].assign(window.begin(), window.begin() + evict_blocks);
    window.erase(window.begin(), window.begin() + evict_blocks);
  }
  size_ += n_new - evict;
  if (unselected.empty()) {
    try {
      store_.commit_append(std::move(evicted), evicted_maw, n_ref, sel);
      return;
    } catch (const std::bad_alloc& e) {
      unselected = e.what();  // selection's scratch; commit_append undid itself
    }
  }
  store_.commit_unselected(std::move(kept), evicted_maw, n_ref);
  throw EvictedUnselected(unselected + fmt::format(" ({} evicted entries kept in the store, not selected)", evict));
}

}  // namespace hgca::kvmgr
