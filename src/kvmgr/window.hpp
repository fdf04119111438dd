// The per-(layer, sequence) window: a ring of window_blocks × block_tokens KV slots with a MAW per
// (KV head, slot). Entries enter at the head and leave from the tail in whole blocks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hgca::kvmgr {

class WindowRing {
 public:
  /// A run of consecutive slots: slots [first_slot, first_slot + count).
  struct Run {
    int64_t first_slot = 0;
    int64_t count = 0;
  };

  WindowRing(int64_t capacity, int32_t n_kv_heads, int32_t head_dim, std::size_t elem_size);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return size_; }
  /// Slot of the i-th oldest entry.
  int64_t slot(int64_t i) const { return (tail_ + i) % capacity_; }
  /// The entries oldest → newest as at most two runs of slots (the ring wraps once at most).
  std::array<Run, 2> runs() const;

  /// K/V of one slot: [n_kv_heads, head_dim] elements.
  const std::byte* k(int64_t slot) const { return k_.data() + slot * row_bytes_; }
  const std::byte* v(int64_t slot) const { return v_.data() + slot * row_bytes_; }
  /// MAW of KV head h at `slot`.
  float& maw(int32_t h, int64_t slot) { return maw_[h * capacity_ + slot]; }
  float maw(int32_t h, int64_t slot) const { return maw_[h * capacity_ + slot]; }
  std::size_t row_bytes() const { return row_bytes_; }

  /// Appends `count` token-major rows [count, n_kv_heads, head_dim]; size() + count ≤ capacity().
  /// Their MAW is set by the caller.
  void push_back(const std::byte* k_rows, const std::byte* v_rows, int64_t count);
  /// Drops the `count` oldest entries (they have been copied to the store).
  void pop_front(int64_t count);

 private:
  int64_t capacity_;
  int32_t n_kv_heads_;
  std::size_t row_bytes_;
  std::vector<std::byte> k_, v_;
  std::vector<float> maw_;  // [n_kv_heads, capacity]
  int64_t tail_ = 0;
  int64_t size_ = 0;
};

}  // namespace hgca::kvmgr
