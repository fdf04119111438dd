// Selection of the context set S from a KV head's store (HGCA Algorithm 1, lines 19–25, §3.3).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kvmgr/scalable.hpp"

namespace hgca::kvmgr {

/// MAW update of Algorithm 1, line 8: maw ← (1 − alpha)·maw + alpha·a.
inline float update_maw(float maw, float a, float alpha) { return (1.0f - alpha) * maw + alpha * a; }

/// An entry earns a place in S when maw > beta / n_ref, where n_ref is the number of entries its
/// weights were normalized over. beta = 0 keeps every entry, so that beta = 0 is exact attention
/// even for an entry whose MAW underflowed to 0.
inline bool passes_threshold(float maw, uint32_t n_ref, float beta) {
  return beta == 0.0f || maw > beta / static_cast<float>(n_ref);
}

/// The order in which entries that did not pass are taken for min_keep and padding: MAW relative
/// to the average weight 1 / n_ref, so entries judged over different n_ref compare fairly.
inline float relative_maw(float maw, uint32_t n_ref) { return maw * static_cast<float>(n_ref); }

/// The context set of one KV head: store indices in the order they were admitted, and a membership
/// flag per store entry. Admission only appends; re-evaluation rebuilds it.
struct ContextSet {
  ScalableVector<uint32_t> indices;
  ScalableVector<uint8_t> member;

  int64_t size() const { return static_cast<int64_t>(indices.size()); }
  void clear() {
    indices.clear();
    member.clear();
  }
};

/// Admits the entries [from, maw.size()) that pass the threshold.
void admit_passing(std::span<const float> maw, std::span<const uint32_t> n_ref, float beta,
                   int64_t from, ContextSet& set);

/// Adds the not-yet-admitted entries of highest relative MAW until the set holds
/// min(target, store size) entries (ties: the older entry first).
void top_up(std::span<const float> maw, std::span<const uint32_t> n_ref, int64_t target,
            ContextSet& set);

}  // namespace hgca::kvmgr
