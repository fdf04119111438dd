// The llama2.c BPE tokenizer (tokenizer.bin format), encoding and decoding exactly as run.c does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca::model {

inline constexpr int32_t kUnkToken = 0;
inline constexpr int32_t kBosToken = 1;
inline constexpr int32_t kEosToken = 2;

class Tokenizer {
 public:
  /// Reads `path`: int32 max_token_length, then `vocab_size` × (float32 score, int32 length, bytes).
  /// The file does not store its vocabulary size; it is the model's (as in run.c).
  static Status load(const std::string& path, int32_t vocab_size, std::unique_ptr<Tokenizer>* out);
  Tokenizer(const Tokenizer&) = delete;  // ids_ views into pieces_
  Tokenizer& operator=(const Tokenizer&) = delete;

  int32_t vocab_size() const { return static_cast<int32_t>(pieces_.size()); }

  /// run.c's encode: optional BOS, a dummy-prefix " " token when `text` is non-empty, UTF-8 code
  /// points looked up whole (unknown ones fall back to their bytes, id = byte + 3), then greedy
  /// merging of the adjacent pair whose merged piece has the highest score; optional EOS.
  std::vector<int32_t> encode(std::string_view text, bool bos, bool eos) const;

  /// run.c's decode: the piece of `token`, without its leading space right after BOS, and a
  /// "<0xXX>" piece as the raw byte.
  std::string_view decode(int32_t prev_token, int32_t token) const;

  /// Appends `piece` as run.c's safe_printf prints it: a lone byte only when printable or space.
  static void append_printable(std::string& out, std::string_view piece);

 private:
  Tokenizer() = default;
  int32_t lookup(std::string_view piece) const;

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, int32_t> ids_;  // views into pieces_, which never reallocates
  std::string byte_pieces_;  // 256 × (byte, '\0'), the pieces of "<0xXX>" tokens
};

}  // namespace hgca::model
