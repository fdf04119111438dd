// Threshold admission and the top-up that min_keep and head padding share.
#include "kvmgr/selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hgca::kvmgr {

void admit_passing(std::span<const float> maw, std::span<const uint32_t> n_ref, float beta,
                   int64_t from, ContextSet& set) {
  const auto m = static_cast<int64_t>(maw.size());
  set.member.resize(static_cast<size_t>(m), 0);
  for (int64_t j = from; j < m; ++j) {
    if (!set.member[j] && passes_threshold(maw[j], n_ref[j], beta)) {
      set.member[j] = 1;
      set.indices.push_back(static_cast<uint32_t>(j));
    }
  }
}

void top_up(std::span<const float> maw, std::span<const uint32_t> n_ref, int64_t target,
            ContextSet& set) {
  const auto m = static_cast<int64_t>(maw.size());
  set.member.resize(static_cast<size_t>(m), 0);
  const int64_t need = std::min(target, m) - set.size();
  if (need <= 0) return;
  std::vector<uint32_t> candidates;
  candidates.reserve(static_cast<size_t>(m - set.size()));
  for (int64_t j = 0; j < m; ++j) {
    if (!set.member[j]) candidates.push_back(static_cast<uint32_t>(j));
  }
  // A NaN MAW (weights of non-finite inputs) ranks last: compared as it is, the order would not be
  // strict weak, which partial_sort needs.
  auto rank = [&](uint32_t j) {
    const float r = relative_maw(maw[j], n_ref[j]);
    return std::isnan(r) ? -std::numeric_limits<float>::infinity() : r;
  };
  auto higher = [&](uint32_t a, uint32_t b) {
    const float ra = rank(a), rb = rank(b);
    return ra != rb ? ra > rb : a < b;
  };
  std::partial_sort(candidates.begin(), candidates.begin() + need, candidates.end(), higher);
  for (int64_t i = 0; i < need; ++i) {
    set.member[candidates[i]] = 1;
    set.indices.push_back(candidates[i]);
  }
}

}  // namespace hgca::kvmgr
