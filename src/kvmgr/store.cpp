// Insert, evict, track and select for one (layer, sequence) (DESIGN.md steps 1–3, 6, 7).
#include "kvmgr/store.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace hgca::kvmgr {

SequenceKv::SequenceKv(int64_t window_tokens, int32_t block_tokens, int32_t n_kv_heads,
                       int32_t head_dim, std::size_t elem_size)
    : window_(window_tokens, n_kv_heads, head_dim, elem_size),
      block_tokens_(block_tokens),
      head_row_bytes_(static_cast<std::size_t>(head_dim) * elem_size),
      stores_(static_cast<std::size_t>(n_kv_heads)) {}

const std::byte* SequenceKv::store_k(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->k.data() + (j % block_tokens_) * head_row_bytes_;
}

const std::byte* SequenceKv::store_v(int32_t h, int64_t j) const {
  const auto& blocks = stores_[h].blocks;
  return blocks[j / block_tokens_]->v.data() + (j % block_tokens_) * head_row_bytes_;
}

int64_t SequenceKv::evict_count(int64_t n_new) const {
  const int64_t over = window_.size() + n_new - window_.capacity();
  if (over <= 0) return 0;
  return (over + block_tokens_ - 1) / block_tokens_ * block_tokens_;
}

void SequenceKv::commit(const std::byte* new_k, const std::byte* new_v, int64_t n_new,
                        std::span<const float* const> weights, float alpha,
                        const SelectionParams& sel) {
  const int64_t w = window_.size();
  const int64_t evict = evict_count(n_new);
  const auto n_ref = static_cast<uint32_t>(w + n_new);
  const int32_t hkv = n_kv_heads();
  const std::size_t token_row_bytes = window_.row_bytes();

  // Entry i of this call, oldest first: window entries, then the new rows.
  auto k_row = [&](int64_t i, int32_t h) {
    const std::byte* row = i < w ? window_.k(window_.slot(i)) : new_k + (i - w) * token_row_bytes;
    return row + h * head_row_bytes_;
  };
  auto v_row = [&](int64_t i, int32_t h) {
    const std::byte* row = i < w ? window_.v(window_.slot(i)) : new_v + (i - w) * token_row_bytes;
    return row + h * head_row_bytes_;
  };

  // Allocate everything the eviction needs before touching any state.
  const int64_t n_blocks = evict / block_tokens_;
  std::vector<StoreBlocks> fresh(static_cast<std::size_t>(hkv));
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t b = 0; b < n_blocks; ++b) {
      auto block = std::make_shared<StoreBlock>();
      block->k.resize(block_tokens_ * head_row_bytes_);
      block->v.resize(block_tokens_ * head_row_bytes_);
      for (int64_t t = 0; t < block_tokens_; ++t) {
        const int64_t i = b * block_tokens_ + t;
        std::memcpy(block->k.data() + t * head_row_bytes_, k_row(i, h), head_row_bytes_);
        std::memcpy(block->v.data() + t * head_row_bytes_, v_row(i, h), head_row_bytes_);
      }
      fresh[h].push_back(std::move(block));
    }
    auto& s = stores_[h];
    s.blocks.reserve(s.blocks.size() + n_blocks);
    s.maw.reserve(s.maw.size() + evict);
    s.n_ref.reserve(s.n_ref.size() + evict);
  }

  // Track: window entries blend their MAW, new entries start at their first observed weight.
  std::vector<float> new_maw(static_cast<std::size_t>(n_new * hkv));
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = 0; i < w; ++i) {
      float& m = window_.maw(h, window_.slot(i));
      m = update_maw(m, weights[h][i], alpha);
    }
    for (int64_t i = 0; i < n_new; ++i) new_maw[h * n_new + i] = weights[h][w + i];
  }
  auto maw_of = [&](int64_t i, int32_t h) {
    return i < w ? window_.maw(h, window_.slot(i)) : new_maw[h * n_new + (i - w)];
  };

  // Evict: the store takes the oldest `evict` entries with their MAW, then the window lets go.
  const int64_t from = store_size();
  for (int32_t h = 0; h < hkv; ++h) {
    auto& s = stores_[h];
    for (auto& block : fresh[h]) s.blocks.push_back(std::move(block));
    for (int64_t i = 0; i < evict; ++i) {
      s.maw.push_back(maw_of(i, h));
      s.n_ref.push_back(n_ref);
    }
  }
  const int64_t keep_from = std::max<int64_t>(0, evict - w);  // first new row that stays
  window_.pop_front(std::min(evict, w));
  const int64_t first_new_slot = window_.size();
  window_.push_back(new_k + keep_from * token_row_bytes, new_v + keep_from * token_row_bytes,
                    n_new - keep_from);
  for (int32_t h = 0; h < hkv; ++h) {
    for (int64_t i = keep_from; i < n_new; ++i) {
      window_.maw(h, window_.slot(first_new_slot + i - keep_from)) = new_maw[h * n_new + i];
    }
  }

  if (evict > 0) select_from(from, sel);
}

void SequenceKv::apply_reevaluation(std::span<const std::vector<float>> a,
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

void SequenceKv::select_from(int64_t from, const SelectionParams& sel) {
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

void SequenceKv::sync_context_cache(HeadStore& s) const {
  const auto cached = static_cast<int64_t>(s.context_k.size() / head_row_bytes_);
  const auto h = static_cast<int32_t>(&s - stores_.data());
  s.context_k.resize(s.context.size() * head_row_bytes_);
  s.context_v.resize(s.context.size() * head_row_bytes_);
  for (int64_t c = cached; c < s.context.size(); ++c) {
    const uint32_t j = s.context.indices[c];
    std::memcpy(s.context_k.data() + c * head_row_bytes_, store_k(h, j), head_row_bytes_);
    std::memcpy(s.context_v.data() + c * head_row_bytes_, store_v(h, j), head_row_bytes_);
  }
}

}  // namespace hgca::kvmgr
