// A llama2.c-architecture transformer on the host (OpenBLAS matmuls) with a pluggable attention.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/attention_backend.hpp"
#include "model/checkpoint.hpp"

namespace hgca::model {

/// One batch step: for each sequence, n_new[i] tokens starting at position start_pos[i] (its
/// history length). A whole prompt is one entry with n_new = its length; decode has n_new = 1.
struct Batch {
  std::span<const SeqId> seq_ids;
  std::span<const int32_t> n_new;
  std::span<const int32_t> start_pos;
  std::span<const int32_t> tokens;  ///< Σ n_new token ids, sequence after sequence
};

/// Which rows of logits forward() returns.
enum class LogitsOf {
  kLastToken,    ///< one row per sequence: what samples the next token
  kEveryToken,   ///< one row per new token: what teacher-forced fidelity metrics need
};

class Model {
 public:
  /// `checkpoint` must outlive the model (the weights stay in its mapping).
  explicit Model(const Checkpoint& checkpoint);

  const Config& config() const { return config_; }
  AttentionShape attention_shape() const;

  /// Runs the batch step through every layer, calling `attention` once per layer between its
  /// begin_step and end_step, and writes logits [rows, vocab_size] (rows per `which`) to `logits`.
  /// A bad batch is refused before the step begins; an error from `attention` itself leaves its
  /// step open, and that backend should then be dropped.
  Status forward(const Batch& batch, AttentionBackend& attention, LogitsOf which, std::vector<float>* logits);

 private:
  void apply_rope(float* vec, int32_t n_heads, int32_t pos) const;

  Config config_;
  Weights w_;
  // RoPE as run.c computes it, tabulated: [seq_len, head_size / 2] of cos and sin.
  std::vector<float> rope_cos_, rope_sin_;
  // Activations of the step, [T, width] each.
  std::vector<float> x_, xb_, q_, k_, v_, att_, xb2_, hb_, hb2_;
};

}  // namespace hgca::model
