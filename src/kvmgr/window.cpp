// Window ring storage; the tail stays block-aligned because whole blocks leave (or all of it).
#include "kvmgr/window.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace hgca::kvmgr {

WindowRing::WindowRing(int64_t capacity, int32_t n_kv_heads, int32_t head_dim,
                       std::size_t elem_size)
    : capacity_(capacity),
      n_kv_heads_(n_kv_heads),
      row_bytes_(static_cast<std::size_t>(n_kv_heads) * head_dim * elem_size),
      k_(static_cast<std::size_t>(capacity) * row_bytes_),
      v_(static_cast<std::size_t>(capacity) * row_bytes_),
      maw_(static_cast<std::size_t>(capacity) * n_kv_heads, 0.0f) {}

std::array<WindowRing::Run, 2> WindowRing::runs() const {
  const int64_t first = std::min(size_, capacity_ - tail_);
  return {Run{tail_, first}, Run{0, size_ - first}};
}

void WindowRing::push_back(const std::byte* k_rows, const std::byte* v_rows, int64_t count) {
  assert(size_ + count <= capacity_);
  // At most two runs of free slots: up to the ring's end, then from its start.
  for (int64_t done = 0; done < count;) {
    const int64_t s = slot(size_ + done);
    const int64_t n = std::min(count - done, capacity_ - s);
    std::memcpy(k_.data() + s * row_bytes_, k_rows + done * row_bytes_, n * row_bytes_);
    std::memcpy(v_.data() + s * row_bytes_, v_rows + done * row_bytes_, n * row_bytes_);
    done += n;
  }
  size_ += count;
}

void WindowRing::pop_front(int64_t count) {
  assert(count <= size_);
  size_ -= count;
  tail_ = size_ == 0 ? 0 : (tail_ + count) % capacity_;
}

}  // namespace hgca::kvmgr
