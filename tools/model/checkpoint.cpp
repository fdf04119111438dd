// Loader of llama2.c "legacy" float32 checkpoints (the layout of llama2.c's memory_map_weights).
#include "model/checkpoint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include <fmt/format.h>

namespace hgca::model {
namespace {

constexpr std::size_t kHeaderBytes = 7 * sizeof(int32_t);

// Product of the factors, or -1 on overflow: a corrupt header must give an error, not a wrap.
int64_t checked_product(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return -1;
  }
  return p;
}

std::string describe(const Config& c, int32_t raw_vocab) {
  return fmt::format("dim {}, hidden_dim {}, n_layers {}, n_heads {}, n_kv_heads {}, vocab_size {}, seq_len {}",
                     c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, raw_vocab, c.seq_len);
}

/// Index of the first NaN or infinity among n floats, or -1: exponent bits all set, tested a chunk at
/// a time in a loop the compiler can vectorize (-O3). It reads every weight at load, which the first
/// token would do anyway (from disk, where the file is not in the page cache).
int64_t first_non_finite(const float* x, int64_t n) {
  constexpr int64_t kChunk = 4096;
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t c1 = c0 + kChunk < n ? c0 + kChunk : n;
    uint32_t any = 0;
    for (int64_t i = c0; i < c1; ++i) {
      uint32_t bits;
      std::memcpy(&bits, x + i, sizeof bits);
      any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (any == 0) continue;
    for (int64_t i = c0; i < c1; ++i) {
      if (!std::isfinite(x[i])) return i;
    }
  }
  return -1;
}

}  // namespace

Checkpoint::~Checkpoint() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

Status Checkpoint::load(const std::string& path, std::unique_ptr<Checkpoint>* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return {err == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': cannot open: {}", path, std::strerror(err))};
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return {StatusCode::kInvalidArgument, fmt::format("checkpoint '{}': cannot stat: {}", path, std::strerror(err))};
  }
  if (!S_ISREG(st.st_mode)) {  // a pipe (`--model <(…)`) has no size to map
    close(fd);
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': expected a regular file (it is memory-mapped), found {}", path,
                        S_ISFIFO(st.st_mode) ? "a pipe" : S_ISDIR(st.st_mode) ? "a directory" : "a special file")};
  }
  const auto file_bytes = static_cast<std::size_t>(st.st_size);
  if (file_bytes < kHeaderBytes) {
    close(fd);
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': expected at least the {}-byte header (7 × int32), found a file of {} bytes",
                        path, kHeaderBytes, file_bytes)};
  }
  void* mapping = mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_err = errno;
  close(fd);  // the mapping keeps the file alive
  if (mapping == MAP_FAILED) {
    return {StatusCode::kOutOfMemory, fmt::format("checkpoint '{}': mmap of {} bytes failed: {}", path, file_bytes,
                                                  std::strerror(map_err))};
  }
  std::unique_ptr<Checkpoint> ckpt(new Checkpoint());
  ckpt->mapping_ = mapping;
  ckpt->mapping_bytes_ = file_bytes;

  std::array<int32_t, 7> h{};
  std::memcpy(h.data(), mapping, kHeaderBytes);
  Config& c = ckpt->config_;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.shared_classifier = h[5] > 0;
  c.vocab_size = h[5] > 0 ? h[5] : -h[5];
  c.seq_len = h[6];
  const std::string header = describe(c, h[5]);

  if (c.dim <= 0 || c.hidden_dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 ||
      c.vocab_size <= 0 || c.seq_len <= 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': expected positive header fields (vocab_size may be negative), found {}",
                        path, header)};
  }
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || c.head_size() % 2 != 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': expected dim divisible by n_heads, n_heads by n_kv_heads and an even head "
                        "size, found {}", path, header)};
  }

  // Float counts of each tensor, in file order (llama2.c's memory_map_weights).
  const int64_t L = c.n_layers, dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim();
  const int64_t rope_table = checked_product({c.seq_len, c.head_size() / 2});  // freq_cis real, imag: unused
  const std::array<int64_t, 14> counts = {
      checked_product({c.vocab_size, dim}),  // token embedding
      checked_product({L, dim}),             // rms_att
      checked_product({L, dim, dim}),        // wq
      checked_product({L, dim, kv_dim}),     // wk
      checked_product({L, dim, kv_dim}),     // wv
      checked_product({L, dim, dim}),        // wo
      checked_product({L, dim}),             // rms_ffn
      checked_product({L, dim, hidden}),     // w1
      checked_product({L, hidden, dim}),     // w2
      checked_product({L, dim, hidden}),     // w3
      dim,                                   // rms_final
      rope_table,
      rope_table,
      c.shared_classifier ? 0 : checked_product({c.vocab_size, dim}),  // wcls
  };
  int64_t floats = 0;
  for (int64_t n : counts) {
    if (n < 0 || __builtin_add_overflow(floats, n, &floats)) floats = -1;
    if (floats < 0) break;
  }
  int64_t expected = -1;
  if (floats >= 0 && !__builtin_mul_overflow(floats, int64_t{sizeof(float)}, &expected)) {
    expected += static_cast<int64_t>(kHeaderBytes);
  }
  if (expected < 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': header ({}) describes a model too large to address", path, header)};
  }
  if (static_cast<std::size_t>(expected) != file_bytes) {
    return {StatusCode::kInvalidArgument,
            fmt::format("checkpoint '{}': header ({}) expects {} bytes ({} classifier), found {} bytes{}", path,
                        header, expected, c.shared_classifier ? "shared" : "separate", file_bytes,
                        static_cast<std::size_t>(expected) > file_bytes ? " (truncated?)" : "")};
  }

  const float* p = reinterpret_cast<const float*>(static_cast<const char*>(mapping) + kHeaderBytes);
  Weights& w = ckpt->weights_;
  // Each tensor starts where the previous one ends (counts' order); the two RoPE tables are skipped.
  // per_layer: a layer's floats, to name where a bad weight is (0: not per layer).
  struct Tensor {
    const char* name;
    const float** slot;
    int64_t per_layer;
  };
  const Tensor tensors[] = {{"token_embedding", &w.token_embedding, 0}, {"rms_att", &w.rms_att, dim},
                            {"wq", &w.wq, dim * dim},           {"wk", &w.wk, dim * kv_dim},
                            {"wv", &w.wv, dim * kv_dim},        {"wo", &w.wo, dim * dim},
                            {"rms_ffn", &w.rms_ffn, dim},       {"w1", &w.w1, dim * hidden},
                            {"w2", &w.w2, hidden * dim},        {"w3", &w.w3, dim * hidden},
                            {"rms_final", &w.rms_final, 0},     {"wcls", &w.wcls, 0}};
  for (std::size_t i = 0; i < 11; ++i) {
    *tensors[i].slot = p;
    p += counts[i];
  }
  p += counts[11] + counts[12];
  w.wcls = c.shared_classifier ? w.token_embedding : p;

  // A NaN or infinite weight would run to the end and report NaN logits; refused here by name.
  for (std::size_t i = 0; i < std::size(tensors); ++i) {
    const Tensor& t = tensors[i];
    const int64_t n = i < 11 ? counts[i] : counts[13];  // wcls: 0 floats of its own when shared
    if (const int64_t at = first_non_finite(*t.slot, n); at >= 0) {
      return {StatusCode::kInvalidArgument,
              fmt::format("checkpoint '{}': weight {}{} holds {} at element {}; expected finite float32 weights", path,
                          t.name, t.per_layer > 0 ? fmt::format(" of layer {}", at / t.per_layer) : "", (*t.slot)[at],
                          t.per_layer > 0 ? at % t.per_layer : at)};
    }
  }

  *out = std::move(ckpt);
  return Status::ok();
}

}  // namespace hgca::model
