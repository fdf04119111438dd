// The llama2.c transformer forward pass (run.c's `forward`) over a ragged batch step, matmuls in OpenBLAS.
#include "model/model.hpp"

#include <cblas.h>

#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace hgca::model {
namespace {

// out[rows, n_out] = x[rows, n_in] · wᵀ, w row-major [n_out][n_in] as llama2.c stores it.
void matmul(const float* x, const float* w, float* out, int32_t rows, int32_t n_in, int32_t n_out) {
  if (rows == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n_out, n_in, 1.0f, w, n_in, x, 1, 0.0f, out, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n_out, n_in, 1.0f, x, n_in, w, n_in, 0.0f, out, n_out);
  }
}

// run.c's rmsnorm (eps 1e-5), row by row.
void rmsnorm(float* out, const float* x, const float* weight, int32_t rows, int32_t size) {
  for (int32_t r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<int64_t>(r) * size;
    float* o = out + static_cast<int64_t>(r) * size;
    float ss = 0.0f;
    for (int32_t j = 0; j < size; ++j) ss += xr[j] * xr[j];
    ss /= static_cast<float>(size);
    ss += 1e-5f;
    ss = 1.0f / std::sqrt(ss);
    for (int32_t j = 0; j < size; ++j) o[j] = weight[j] * (ss * xr[j]);
  }
}

}  // namespace

Model::Model(const Checkpoint& checkpoint) : config_(checkpoint.config()), w_(checkpoint.weights()) {
  const int32_t hs = config_.head_size(), half = hs / 2;
  rope_cos_.resize(static_cast<std::size_t>(config_.seq_len) * static_cast<std::size_t>(half));
  rope_sin_.resize(rope_cos_.size());
  for (int32_t pos = 0; pos < config_.seq_len; ++pos) {
    for (int32_t i = 0; i < half; ++i) {
      // The same fp32 operations as run.c, so the rotation is bit-identical to it.
      const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / static_cast<float>(hs));
      const float val = static_cast<float>(pos) * freq;
      const auto at = static_cast<std::size_t>(pos) * static_cast<std::size_t>(half) + static_cast<std::size_t>(i);
      rope_cos_[at] = std::cos(val);
      rope_sin_[at] = std::sin(val);
    }
  }
}

AttentionShape Model::attention_shape() const {
  return {config_.n_layers, config_.n_heads, config_.n_kv_heads, config_.head_size()};
}

void Model::apply_rope(float* vec, int32_t n_heads, int32_t pos) const {
  const int32_t hs = config_.head_size(), half = hs / 2;
  const float* cos_row = rope_cos_.data() + static_cast<int64_t>(pos) * half;
  const float* sin_row = rope_sin_.data() + static_cast<int64_t>(pos) * half;
  for (int32_t h = 0; h < n_heads; ++h) {
    float* head = vec + static_cast<int64_t>(h) * hs;
    for (int32_t i = 0; i < half; ++i) {
      const float v0 = head[2 * i], v1 = head[2 * i + 1];
      head[2 * i] = v0 * cos_row[i] - v1 * sin_row[i];
      head[2 * i + 1] = v0 * sin_row[i] + v1 * cos_row[i];
    }
  }
}

Status Model::forward(const Batch& batch, AttentionBackend& attention, LogitsOf which, std::vector<float>* logits) {
  const Config& c = config_;
  const std::size_t n_seqs = batch.seq_ids.size();
  if (n_seqs == 0 || batch.n_new.size() != n_seqs || batch.start_pos.size() != n_seqs) {
    return {StatusCode::kInvalidArgument,
            fmt::format("forward: expected a non-empty batch with one n_new and start_pos per sequence, got {} ids, "
                        "{} n_new, {} start_pos", n_seqs, batch.n_new.size(), batch.start_pos.size())};
  }
  int64_t total = 0;
  for (std::size_t i = 0; i < n_seqs; ++i) {
    if (batch.n_new[i] < 1 || batch.start_pos[i] < 0 ||
        int64_t{batch.start_pos[i]} + batch.n_new[i] > c.seq_len) {
      return {StatusCode::kInvalidArgument,
              fmt::format("forward: sequence {} brings {} tokens at positions from {}; expected ≥ 1 token within the "
                          "model's seq_len {}", batch.seq_ids[i], batch.n_new[i], batch.start_pos[i], c.seq_len)};
    }
    total += batch.n_new[i];
  }
  if (static_cast<int64_t>(batch.tokens.size()) != total) {
    return {StatusCode::kInvalidArgument,
            fmt::format("forward: expected {} tokens (Σ n_new), got {}", total, batch.tokens.size())};
  }
  for (std::size_t r = 0; r < batch.tokens.size(); ++r) {
    if (batch.tokens[r] < 0 || batch.tokens[r] >= c.vocab_size) {
      return {StatusCode::kInvalidArgument, fmt::format("forward: tokens[{}] = {} is outside the vocabulary [0, {})",
                                                        r, batch.tokens[r], c.vocab_size)};
    }
  }

  const auto T = static_cast<int32_t>(total);
  const int32_t dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim;
  const auto rows_of = [T](int32_t width) { return static_cast<std::size_t>(T) * static_cast<std::size_t>(width); };
  x_.resize(rows_of(dim));
  xb_.resize(rows_of(dim));
  q_.resize(rows_of(dim));
  k_.resize(rows_of(kv_dim));
  v_.resize(rows_of(kv_dim));
  att_.resize(rows_of(dim));
  xb2_.resize(rows_of(dim));
  hb_.resize(rows_of(hidden));
  hb2_.resize(rows_of(hidden));

  std::vector<int32_t> positions(static_cast<std::size_t>(T));
  for (std::size_t i = 0, r = 0; i < n_seqs; ++i) {
    for (int32_t t = 0; t < batch.n_new[i]; ++t) positions[r++] = batch.start_pos[i] + t;
  }
  for (int32_t r = 0; r < T; ++r) {
    const float* row = w_.token_embedding + static_cast<int64_t>(batch.tokens[static_cast<std::size_t>(r)]) * dim;
    std::copy(row, row + dim, x_.begin() + static_cast<int64_t>(r) * dim);
  }

  Status status = attention.begin_step(batch.seq_ids, batch.n_new);
  if (!status) return status;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const int64_t L = l;
    rmsnorm(xb_.data(), x_.data(), w_.rms_att + L * dim, T, dim);
    matmul(xb_.data(), w_.wq + L * dim * dim, q_.data(), T, dim, dim);
    matmul(xb_.data(), w_.wk + L * dim * kv_dim, k_.data(), T, dim, kv_dim);
    matmul(xb_.data(), w_.wv + L * dim * kv_dim, v_.data(), T, dim, kv_dim);
    for (int32_t r = 0; r < T; ++r) {
      const int32_t pos = positions[static_cast<std::size_t>(r)];
      apply_rope(q_.data() + static_cast<int64_t>(r) * dim, c.n_heads, pos);
      apply_rope(k_.data() + static_cast<int64_t>(r) * kv_dim, c.n_kv_heads, pos);
    }
    status = attention.attend(l, q_, k_, v_, att_);
    if (!status) return status;
    matmul(att_.data(), w_.wo + L * dim * dim, xb2_.data(), T, dim, dim);
    for (std::size_t j = 0; j < x_.size(); ++j) x_[j] += xb2_[j];

    // SwiGLU feed-forward: w2 · (silu(w1 · x) ⊙ (w3 · x)).
    rmsnorm(xb_.data(), x_.data(), w_.rms_ffn + L * dim, T, dim);
    matmul(xb_.data(), w_.w1 + L * dim * hidden, hb_.data(), T, dim, hidden);
    matmul(xb_.data(), w_.w3 + L * dim * hidden, hb2_.data(), T, dim, hidden);
    for (std::size_t j = 0; j < hb_.size(); ++j) {
      float val = hb_[j];
      val *= 1.0f / (1.0f + std::exp(-val));
      hb_[j] = val * hb2_[j];
    }
    matmul(hb_.data(), w_.w2 + L * hidden * dim, xb_.data(), T, hidden, dim);
    for (std::size_t j = 0; j < x_.size(); ++j) x_[j] += xb_[j];
  }
  status = attention.end_step();
  if (!status) return status;

  // Only the rows whose logits are wanted go through the final norm and the classifier.
  std::vector<int32_t> rows;
  if (which == LogitsOf::kEveryToken) {
    rows.resize(static_cast<std::size_t>(T));
    std::iota(rows.begin(), rows.end(), 0);
  } else {
    for (std::size_t i = 0, end = 0; i < n_seqs; ++i) {
      end += static_cast<std::size_t>(batch.n_new[i]);
      rows.push_back(static_cast<int32_t>(end) - 1);
    }
  }
  const auto R = static_cast<int32_t>(rows.size());
  for (int32_t i = 0; i < R; ++i) {
    const float* src = x_.data() + static_cast<int64_t>(rows[static_cast<std::size_t>(i)]) * dim;
    rmsnorm(xb_.data() + static_cast<int64_t>(i) * dim, src, w_.rms_final, 1, dim);
  }
  logits->resize(static_cast<std::size_t>(R) * static_cast<std::size_t>(c.vocab_size));
  matmul(xb_.data(), w_.wcls, logits->data(), R, dim, c.vocab_size);
  return Status::ok();
}

}  // namespace hgca::model
