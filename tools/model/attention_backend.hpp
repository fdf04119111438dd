// The attention layer as the model runner sees it: a KV cache per sequence behind a step protocol.
#pragma once

#include <cstdint>
#include <span>

#include "hgca/hgca.hpp"

namespace hgca::model {

/// Shape of the model's attention.
struct AttentionShape {
  int32_t n_layers = 0;
  int32_t n_q_heads = 0;   ///< Hq
  int32_t n_kv_heads = 0;  ///< Hkv; query head h reads KV head h / (Hq / Hkv)
  int32_t head_dim = 0;    ///< D
};

/// The same step protocol as hgca::Runtime, with fp32 activations: begin_step(batch), then attend
/// once per layer, then end_step; sequences are added and released between steps.
class AttentionBackend {
 public:
  virtual ~AttentionBackend() = default;

  virtual Status add_sequence(SeqId id) = 0;
  virtual Status release_sequence(SeqId id) = 0;
  /// Batch entry i brings n_new[i] ≥ 1 tokens, rows [offset_i, offset_i + n_new[i]) of the step.
  virtual Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) = 0;
  /// q [T, Hq, D], k and v [T, Hkv, D], out [T, Hq, D], row-major fp32; every new query attends
  /// causally to its sequence's history and the new tokens up to itself, scores scaled by 1/√D.
  virtual Status attend(int32_t layer, std::span<const float> q, std::span<const float> k,
                        std::span<const float> v, std::span<float> out) = 0;
  virtual Status end_step() = 0;
};

}  // namespace hgca::model
