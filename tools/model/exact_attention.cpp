// Exact causal attention over a plain fp32 KV cache (the fidelity baseline of the model runner).
#include "model/exact_attention.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

namespace hgca::model {

ExactAttention::ExactAttention(const AttentionShape& shape)
    : shape_(shape), attended_(static_cast<std::size_t>(shape.n_layers), false) {}

Status ExactAttention::add_sequence(SeqId id) {
  if (in_step_) return {StatusCode::kFailedPrecondition, "add_sequence: called inside a step (after begin_step)"};
  Sequence seq;
  seq.k.resize(static_cast<std::size_t>(shape_.n_layers));
  seq.v.resize(static_cast<std::size_t>(shape_.n_layers));
  if (!sequences_.emplace(id, std::move(seq)).second) {
    return {StatusCode::kInvalidArgument, fmt::format("add_sequence: id {} is already live", id)};
  }
  return Status::ok();
}

Status ExactAttention::release_sequence(SeqId id) {
  if (in_step_) return {StatusCode::kFailedPrecondition, "release_sequence: called inside a step (after begin_step)"};
  if (sequences_.erase(id) == 0) {
    return {StatusCode::kNotFound, fmt::format("release_sequence: id {} is not a live sequence", id)};
  }
  return Status::ok();
}

Status ExactAttention::begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) {
  if (in_step_) return {StatusCode::kFailedPrecondition, "begin_step: the previous step was not ended"};
  if (seq_ids.empty() || seq_ids.size() != n_new.size()) {
    return {StatusCode::kInvalidArgument,
            fmt::format("begin_step: expected a non-empty batch with one n_new per sequence, got {} ids and {} "
                        "counts", seq_ids.size(), n_new.size())};
  }
  std::unordered_set<SeqId> seen;
  std::vector<Sequence*> sequences;
  int64_t tokens = 0;
  for (std::size_t i = 0; i < seq_ids.size(); ++i) {
    const auto it = sequences_.find(seq_ids[i]);
    if (it == sequences_.end()) {
      return {StatusCode::kNotFound, fmt::format("begin_step: seq_ids[{}] = {} is not a live sequence", i, seq_ids[i])};
    }
    if (!seen.insert(seq_ids[i]).second) {
      return {StatusCode::kInvalidArgument, fmt::format("begin_step: seq_ids[{}] = {} appears twice", i, seq_ids[i])};
    }
    if (n_new[i] < 1) {
      return {StatusCode::kInvalidArgument, fmt::format("begin_step: n_new[{}] = {}, expected ≥ 1", i, n_new[i])};
    }
    sequences.push_back(&it->second);
    tokens += n_new[i];
  }
  step_sequences_ = std::move(sequences);
  step_n_new_.assign(n_new.begin(), n_new.end());
  step_tokens_ = tokens;
  std::fill(attended_.begin(), attended_.end(), false);
  in_step_ = true;
  return Status::ok();
}

Status ExactAttention::attend(int32_t layer, std::span<const float> q, std::span<const float> k,
                              std::span<const float> v, std::span<float> out) {
  if (!in_step_) return {StatusCode::kFailedPrecondition, "attend: called outside a step (before begin_step)"};
  if (layer < 0 || layer >= shape_.n_layers) {
    return {StatusCode::kInvalidArgument, fmt::format("attend: layer {} out of range [0, {})", layer, shape_.n_layers)};
  }
  const auto l = static_cast<std::size_t>(layer);
  if (attended_[l]) {
    return {StatusCode::kFailedPrecondition, fmt::format("attend: layer {} was already attended in this step", layer)};
  }
  const int64_t D = shape_.head_dim, Hq = shape_.n_q_heads, Hkv = shape_.n_kv_heads;
  const auto q_elems = static_cast<std::size_t>(step_tokens_ * Hq * D);
  const auto kv_elems = static_cast<std::size_t>(step_tokens_ * Hkv * D);
  if (q.size() != q_elems || out.size() != q_elems || k.size() != kv_elems || v.size() != kv_elems) {
    return {StatusCode::kInvalidArgument,
            fmt::format("attend: expected q and out of {} elements and k, v of {} ([T={}, H, D={}]), got q {}, k {}, "
                        "v {}, out {}", q_elems, kv_elems, step_tokens_, D, q.size(), k.size(), v.size(),
                        out.size())};
  }
  attended_[l] = true;

  const int64_t group = Hq / Hkv;
  const float sqrt_d = std::sqrt(static_cast<float>(D));
  int64_t row = 0;  // first row of the current batch entry in the step's tensors
  for (std::size_t b = 0; b < step_sequences_.size(); ++b) {
    Sequence& seq = *step_sequences_[b];
    const int64_t n = step_n_new_[b];
    std::vector<float>& kc = seq.k[l];
    std::vector<float>& vc = seq.v[l];
    kc.insert(kc.end(), k.begin() + row * Hkv * D, k.begin() + (row + n) * Hkv * D);
    vc.insert(vc.end(), v.begin() + row * Hkv * D, v.begin() + (row + n) * Hkv * D);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t context = seq.length + t + 1;  // causal: the history and the new tokens up to t
      scores_.resize(static_cast<std::size_t>(context));
      for (int64_t h = 0; h < Hq; ++h) {
        const float* qh = q.data() + ((row + t) * Hq + h) * D;
        const int64_t kv_head = h / group;
        float max_score = -INFINITY;
        for (int64_t j = 0; j < context; ++j) {
          const float* kj = kc.data() + (j * Hkv + kv_head) * D;
          float score = 0.0f;
          for (int64_t d = 0; d < D; ++d) score += qh[d] * kj[d];
          score /= sqrt_d;
          scores_[static_cast<std::size_t>(j)] = score;
          max_score = std::max(max_score, score);
        }
        float sum = 0.0f;
        for (float& s : scores_) {
          s = std::exp(s - max_score);
          sum += s;
        }
        for (float& s : scores_) s /= sum;
        float* oh = out.data() + ((row + t) * Hq + h) * D;
        std::fill(oh, oh + D, 0.0f);
        for (int64_t j = 0; j < context; ++j) {
          const float* vj = vc.data() + (j * Hkv + kv_head) * D;
          const float a = scores_[static_cast<std::size_t>(j)];
          for (int64_t d = 0; d < D; ++d) oh[d] += a * vj[d];
        }
      }
    }
    row += n;
  }
  return Status::ok();
}

Status ExactAttention::end_step() {
  if (!in_step_) return {StatusCode::kFailedPrecondition, "end_step: called outside a step (before begin_step)"};
  const auto missing = std::find(attended_.begin(), attended_.end(), false);
  if (missing != attended_.end()) {
    return {StatusCode::kFailedPrecondition,
            fmt::format("end_step: layer {} was not attended in this step", missing - attended_.begin())};
  }
  for (std::size_t b = 0; b < step_sequences_.size(); ++b) step_sequences_[b]->length += step_n_new_[b];
  in_step_ = false;
  return Status::ok();
}

}  // namespace hgca::model
