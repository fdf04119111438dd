// Loader of llama2.c "legacy" float32 checkpoints: a 7 × int32 header, then every weight, mmapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "hgca/hgca.hpp"

namespace hgca::model {

/// The checkpoint's header, as llama2.c's Config.
struct Config {
  int32_t dim = 0;         ///< residual stream width
  int32_t hidden_dim = 0;  ///< FFN width
  int32_t n_layers = 0;
  int32_t n_heads = 0;     ///< query heads
  int32_t n_kv_heads = 0;  ///< KV heads (GQA when fewer than n_heads)
  int32_t vocab_size = 0;  ///< always positive here; the file's sign is `shared_classifier`
  int32_t seq_len = 0;     ///< longest sequence the model was trained for
  bool shared_classifier = true;  ///< classifier is the token embedding (positive vocab_size on disk)

  int32_t head_size() const { return dim / n_heads; }
  int32_t kv_dim() const { return n_kv_heads * head_size(); }
};

/// Pointers into the mapped file; every matrix is row-major [out][in], per layer back to back.
struct Weights {
  const float* token_embedding = nullptr;  ///< [vocab, dim]
  const float* rms_att = nullptr;          ///< [layers, dim]
  const float* wq = nullptr;               ///< [layers, dim, dim]
  const float* wk = nullptr;               ///< [layers, kv_dim, dim]
  const float* wv = nullptr;               ///< [layers, kv_dim, dim]
  const float* wo = nullptr;               ///< [layers, dim, dim]
  const float* rms_ffn = nullptr;          ///< [layers, dim]
  const float* w1 = nullptr;               ///< [layers, hidden, dim]
  const float* w2 = nullptr;               ///< [layers, dim, hidden]
  const float* w3 = nullptr;               ///< [layers, hidden, dim]
  const float* rms_final = nullptr;        ///< [dim]
  const float* wcls = nullptr;             ///< [vocab, dim]
};

class Checkpoint {
 public:
  /// Maps `path` and checks its size against the header; errors name the path, what was expected
  /// and what was found.
  static Status load(const std::string& path, std::unique_ptr<Checkpoint>* out);
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  const Config& config() const { return config_; }
  const Weights& weights() const { return weights_; }

 private:
  Checkpoint() = default;

  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  Config config_;
  Weights weights_;
};

}  // namespace hgca::model
