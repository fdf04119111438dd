// Insert, evict, track and select for one (layer, sequence) (DESIGN.md steps 1–3, 6, 7).
#include "kvmgr/store.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace hgca::kvmgr {

DramStore::DramStore(int32_t block_tokens, int32_t n_kv_heads, int32_t head_dim, std::size_t elem_size)
    : block_tokens_(block_tokens),
      head_row_bytes_(static_cast<std::size_t>(head_dim) * elem_size),
      stores_(static_cast<std::size_t>(n_kv_heads)) {}

const std::byte* DramStore::k(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->k.data() + (j % block_tokens_) * head_row_bytes_;
}

const std::byte* DramStore::v(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->v.data() + (j % block_tokens_) * head_row_bytes_;
}

void DramStore::append(const std::byte* k_rows, const std::byte* v_rows, const float* maw,
                       int64_t count, uint32_t n_ref, const SelectionParams& sel) {
  if (count == 0) return;
  assert(count % block_tokens_ == 0);
  const int32_t hkv = n_kv_heads();
  const std::size_t token_row_bytes = head_row_bytes_ * hkv;
  const int64_t n_blocks = count / block_tokens_;

  // Allocate everything before touching any state.
  std::vector<StoreBlocks> fresh(static_cast<std::size_t>(hkv));
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t b = 0; b < n_blocks; ++b) {
      auto block = std::make_shared<StoreBlock>();
      block->k.resize(block_tokens_ * head_row_bytes_);
      block->v.resize(block_tokens_ * head_row_bytes_);
      for (int64_t t = 0; t < block_tokens_; ++t) {
        const std::size_t src = (b * block_tokens_ + t) * token_row_bytes + h * head_row_bytes_;
        std::memcpy(block->k.data() + t * head_row_bytes_, k_rows + src, head_row_bytes_);
        std::memcpy(block->v.data() + t * head_row_bytes_, v_rows + src, head_row_bytes_);
      }
      fresh[h].push_back(std::move(block));
    }
    auto& s = stores_[h];
    s.blocks.reserve(s.blocks.size() + n_blocks);
    s.maw.reserve(s.maw.size() + count);
    s.n_ref.reserve(s.n_ref.size() + count);
  }

  const int64_t from = size();
  for (int32_t h = 0; h < hkv; ++h) {
    auto& s = stores_[h];
    for (auto& block : fresh[h]) s.blocks.push_back(std::move(block));
    s.maw.insert(s.maw.end(), maw + h * count, maw + (h + 1) * count);
    s.n_ref.insert(s.n_ref.end(), count, n_ref);
  }
  select_from(from, sel);
}

void DramStore::apply_reevaluation(std::span<const std::vector<float>> a,
                                   const SelectionParams& sel) {
  for (int32_t h = 0; h < n_kv_heads(); ++h) {
    auto& s = stores_[h];
    const auto m0 = static_cast<uint32_t>(a[h].size());
    assert(m0 <= s.maw.size());
    std::copy(a[h].begin(), a[h].end(), s.maw.begin());
    std::fill_n(s.n_ref.begin(), m0, m0);
    s.context.clear();
    s.context_k.clear();
    s.context_v.clear();
  }
  select_from(0, sel);
}

void DramStore::select_from(int64_t from, const SelectionParams& sel) {
  for (auto& s : stores_) {
    admit_passing(s.maw, s.n_ref, sel.beta, from, s.context);
    top_up(s.maw, s.n_ref, sel.min_keep, s.context);
  }
  // Heads merged into one CPU task are padded to the longest context set among them (§3.3).
  if (sel.heads_per_task > 1) {
    for (std::size_t first = 0; first < stores_.size(); first += sel.heads_per_task) {
      const std::size_t last = std::min(stores_.size(), first + sel.heads_per_task);
      int64_t target = 0;
      for (std::size_t h = first; h < last; ++h) target = std::max(target, stores_[h].context.size());
      for (std::size_t h = first; h < last; ++h) {
        top_up(stores_[h].maw, stores_[h].n_ref, target, stores_[h].context);
      }
    }
  }
  for (auto& s : stores_) sync_context_cache(s);
}

void DramStore::sync_context_cache(HeadStore& s) const {
  const auto cached = static_cast<int64_t>(s.context_k.size() / head_row_bytes_);
  const auto h = static_cast<int32_t>(&s - stores_.data());
  s.context_k.resize(s.context.size() * head_row_bytes_);
  s.context_v.resize(s.context.size() * head_row_bytes_);
  for (int64_t c = cached; c < s.context.size(); ++c) {
    const uint32_t j = s.context.indices[c];
    std::memcpy(s.context_k.data() + c * head_row_bytes_, k(h, j), head_row_bytes_);
    std::memcpy(s.context_v.data() + c * head_row_bytes_, v(h, j), head_row_bytes_);
  }
}

SequenceKv::SequenceKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads,
                       int32_t head_dim, std::size_t elem_size)
    : window_(window_tokens, n_kv_heads, head_dim, elem_size),
      store_(block_tokens, n_kv_heads, head_dim, elem_size) {}

void SequenceKv::commit(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                        std::span<const float* const> weights, float alpha,
                        const SelectionParams& sel) {
  const int64_t w = window_.size();
  const int64_t evict = evict_count(n_new);
  const int32_t hkv = n_kv_heads();

  // Track: window entries blend their MAW, new entries start at their first observed weight.
  // Computed aside and written back only once the store has taken the evicted entries.
  std::vector<float> maw_of(static_cast<std::size_t>((w + n_new) * hkv));  // [h][entry]
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = 0; i < w; ++i) {
      maw_of[h * (w + n_new) + i] = update_maw(window_.maw(h, window_.slot(i)), weights[h][i], alpha);
    }
    for (int64_t i = 0; i < n_new; ++i) maw_of[h * (w + n_new) + w + i] = weights[h][w + i];
  }
  std::vector<float> evicted_maw(static_cast<std::size_t>(evict * hkv));  // [h][evicted entry]
  for (int32_t h = 0; h < hkv; ++h) {
    std::copy_n(maw_of.begin() + h * (w + n_new), evict, evicted_maw.begin() + h * evict);
  }

  evict_and_insert(new_k, new_v, n_new, evicted_maw.data(), sel);

  // The window now holds entries [evict, w + n_new) of window ∪ new rows, oldest first.
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = 0; i < window_.size(); ++i) {
      window_.maw(h, window_.slot(i)) = maw_of[h * (w + n_new) + evict + i];
    }
  }
}

void SequenceKv::evict_and_insert(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                                  const float* evicted_maw, const SelectionParams& sel) {
  const int64_t w = window_.size();
  const int64_t evict = evict_count(n_new);
  const std::size_t row_bytes = window_.row_bytes();

  if (evict > 0) {
    // The evicted rows, oldest first: at most two runs of window slots, then new rows. The store
    // takes them contiguous: a single run is handed over in place, several are joined first.
    struct Piece {
      const std::byte *k, *v;
      int64_t rows;
    };
    std::array<Piece, 3> pieces{};
    int n_pieces = 0;
    int64_t left = evict;
    for (const WindowRing::Run& run : window_.runs()) {
      const int64_t rows = std::min(run.count, left);
      if (rows > 0) pieces[n_pieces++] = {window_.k(run.first_slot), window_.v(run.first_slot), rows};
      left -= rows;
    }
    if (left > 0) pieces[n_pieces++] = {new_k, new_v, left};
    const auto n_ref = static_cast<uint32_t>(w + n_new);
    if (n_pieces == 1) {
      store_.append(pieces[0].k, pieces[0].v, evicted_maw, evict, n_ref, sel);
    } else {
      std::vector<std::byte> k_rows(evict * row_bytes), v_rows(evict * row_bytes);
      std::size_t at = 0;
      for (int p = 0; p < n_pieces; ++p) {
        std::memcpy(k_rows.data() + at, pieces[p].k, pieces[p].rows * row_bytes);
        std::memcpy(v_rows.data() + at, pieces[p].v, pieces[p].rows * row_bytes);
        at += pieces[p].rows * row_bytes;
      }
      store_.append(k_rows.data(), v_rows.data(), evicted_maw, evict, n_ref, sel);
    }
  }

  const int64_t keep_from = std::max<int64_t>(0, evict - w);  // first new row that stays
  window_.pop_front(std::min(evict, w));
  window_.push_back(new_k + keep_from * row_bytes, new_v + keep_from * row_bytes, n_new - keep_from);
}

}  // namespace hgca::kvmgr
