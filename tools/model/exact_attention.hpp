// Exact causal attention over a plain fp32 KV cache: the baseline that hgca's output is judged by.
#pragma once

#include <unordered_map>
#include <vector>

#include "model/attention_backend.hpp"

namespace hgca::model {

/// Keeps every sequence's whole K and V in fp32 and attends to all of it with a straightforward
/// softmax, computed like llama2.c's run.c (scores divided by √D, max-subtracted softmax, then the
/// weighted sum of V in token order). Independent of hgca's code on purpose.
class ExactAttention final : public AttentionBackend {
 public:
  explicit ExactAttention(const AttentionShape& shape);

  Status add_sequence(SeqId id) override;
  Status release_sequence(SeqId id) override;
  Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) override;
  Status attend(int32_t layer, std::span<const float> q, std::span<const float> k, std::span<const float> v,
                std::span<float> out) override;
  Status end_step() override;

 private:
  struct Sequence {
    std::vector<std::vector<float>> k, v;  // per layer, [length, Hkv, D]
    int64_t length = 0;                    // tokens before the current step
  };

  AttentionShape shape_;
  std::unordered_map<SeqId, Sequence> sequences_;
  bool in_step_ = false;
  std::vector<Sequence*> step_sequences_;
  std::vector<int32_t> step_n_new_;
  int64_t step_tokens_ = 0;
  std::vector<bool> attended_;  // per layer, in the current step
  std::vector<float> scores_;
};

}  // namespace hgca::model
