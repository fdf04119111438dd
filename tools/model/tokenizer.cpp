// The llama2.c BPE tokenizer; each function follows its namesake in llama2.c's run.c.
#include "model/tokenizer.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <queue>
#include <string>

#include <fmt/format.h>

namespace hgca::model {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// run.c's sscanf(piece, "<0x%02hhX>", &byte): "<0x" then one or two hex digits.
int raw_byte_of(std::string_view piece) {
  if (piece.size() < 4 || piece.substr(0, 3) != "<0x") return -1;
  const int hi = hex_value(piece[3]);
  if (hi < 0) return -1;
  const int lo = piece.size() > 4 ? hex_value(piece[4]) : -1;
  return lo < 0 ? hi : hi * 16 + lo;
}

}  // namespace

Status Tokenizer::load(const std::string& path, int32_t vocab_size, std::unique_ptr<Tokenizer>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {StatusCode::kNotFound, fmt::format("tokenizer '{}': cannot open: {}", path, std::strerror(errno))};
  }
  if (vocab_size < 3) {
    return {StatusCode::kInvalidArgument,
            fmt::format("tokenizer '{}': the model's vocab_size = {}, expected ≥ 3 (ids 0, 1, 2 are <unk>, <s>, </s>)",
                        path, vocab_size)};
  }
  const auto read = [&in](void* dst, std::size_t bytes) {
    return static_cast<bool>(in.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes)));
  };
  // A file's size bounds every length it claims: a corrupt one must not make us allocate gigabytes
  // (a pipe has no size: -1, and only max_token_length bounds it).
  in.seekg(0, std::ios::end);
  const auto file_bytes = static_cast<int64_t>(in.tellg());
  if (file_bytes >= 0) {
    in.seekg(0);
  } else {
    in.clear();
  }
  std::unique_ptr<Tokenizer> tok(new Tokenizer());
  int32_t max_token_length = 0;
  if (!read(&max_token_length, sizeof max_token_length)) {
    return {StatusCode::kInvalidArgument,
            fmt::format("tokenizer '{}': expected an int32 max_token_length, found a file of fewer than 4 bytes",
                        path)};
  }
  if (max_token_length < 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("tokenizer '{}': max_token_length = {}, expected ≥ 0", path, max_token_length)};
  }
  tok->pieces_.resize(static_cast<std::size_t>(vocab_size));
  tok->scores_.resize(static_cast<std::size_t>(vocab_size));
  for (int32_t i = 0; i < vocab_size; ++i) {
    float score = 0.0f;
    int32_t len = 0;
    if (!read(&score, sizeof score) || !read(&len, sizeof len)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("tokenizer '{}': expected {} tokens (the model's vocab_size), the file ends in token {}",
                          path, vocab_size, i)};
    }
    if (!std::isfinite(score)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("tokenizer '{}': token {} has score {}, expected a finite number (merges compare them)", path,
                          i, score)};
    }
    if (len < 0 || len > max_token_length) {
      return {StatusCode::kInvalidArgument,
              fmt::format("tokenizer '{}': token {} has length {}, expected 0..{} (max_token_length)", path, i, len,
                          max_token_length)};
    }
    if (const int64_t left = file_bytes - static_cast<int64_t>(in.tellg()); file_bytes >= 0 && len > left) {
      return {StatusCode::kInvalidArgument,
              fmt::format("tokenizer '{}': expected {} bytes of token {}, the file ends first", path, len, i)};
    }
    std::string& piece = tok->pieces_[static_cast<std::size_t>(i)];
    piece.resize(static_cast<std::size_t>(len));
    if (!read(piece.data(), piece.size())) {
      return {StatusCode::kInvalidArgument,
              fmt::format("tokenizer '{}': expected {} bytes of token {}, the file ends first", path, len, i)};
    }
    tok->scores_[static_cast<std::size_t>(i)] = score;
  }
  // More tokens than the model's vocabulary: the tokenizer of another model.
  if (in.peek() != std::char_traits<char>::eof()) {
    return {StatusCode::kInvalidArgument,
            fmt::format("tokenizer '{}': the file goes on after the model's vocab_size = {} tokens, expected it to end "
                        "there (a tokenizer for another vocabulary?)", path, vocab_size)};
  }
  for (int32_t i = 0; i < vocab_size; ++i) {
    tok->ids_.emplace(tok->pieces_[static_cast<std::size_t>(i)], i);  // first id wins on duplicates
  }
  tok->byte_pieces_.resize(512);
  for (int b = 0; b < 256; ++b) tok->byte_pieces_[static_cast<std::size_t>(2 * b)] = static_cast<char>(b);
  *out = std::move(tok);
  return Status::ok();
}

int32_t Tokenizer::lookup(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool bos, bool eos) const {
  std::vector<int32_t> tokens;
  if (bos) tokens.push_back(kBosToken);
  // Byte fallback: the first 3 ids are <unk>, <s>, </s>, then one token per byte; <unk> where the
  // vocabulary is too small to hold them.
  const auto byte_token = [this](char byte) {
    const int32_t id = static_cast<unsigned char>(byte) + 3;
    return id < vocab_size() ? id : kUnkToken;
  };
  if (!text.empty()) {
    const int32_t dummy_prefix = lookup(" ");
    tokens.push_back(dummy_prefix >= 0 ? dummy_prefix : byte_token(' '));
  }
  // Code points: a lead byte starts one, continuation bytes (10xxxxxx) join it, at most 4 bytes.
  std::string buffer;
  for (std::size_t c = 0; c < text.size(); ++c) {
    if ((static_cast<unsigned char>(text[c]) & 0xC0) != 0x80) buffer.clear();
    buffer.push_back(text[c]);
    const bool continues = c + 1 < text.size() && (static_cast<unsigned char>(text[c + 1]) & 0xC0) == 0x80;
    if (continues && buffer.size() < 4) continue;
    const int32_t id = lookup(buffer);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (char byte : buffer) tokens.push_back(byte_token(byte));
    }
    buffer.clear();
  }
  // Greedy BPE as run.c: merge the adjacent pair whose merged piece scores highest (the leftmost of
  // equals; only scores above -1e10, run.c's start), until no pair is in the vocabulary. The pairs
  // wait in a heap over a list of the tokens (each keeps its first position): run.c rescans every
  // pair after each merge, which took 10 s for a prompt of 32000 characters.
  struct Pair {
    float score;
    int32_t left, right;            // positions
    int32_t left_token, right_token;  // as they were: a pair whose side merged since is stale
    int32_t id;
  };
  const auto after = [](const Pair& a, const Pair& b) { return a.score != b.score ? a.score < b.score : a.left > b.left; };
  std::priority_queue<Pair, std::vector<Pair>, decltype(after)> pairs(after);
  const auto n = static_cast<int32_t>(tokens.size());
  std::vector<int32_t> next(static_cast<std::size_t>(n)), prev(static_cast<std::size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    next[static_cast<std::size_t>(i)] = i + 1 < n ? i + 1 : -1;
    prev[static_cast<std::size_t>(i)] = i - 1;
  }
  const auto offer = [&](int32_t left, int32_t right) {
    const int32_t lt = tokens[static_cast<std::size_t>(left)], rt = tokens[static_cast<std::size_t>(right)];
    buffer = pieces_[static_cast<std::size_t>(lt)];
    buffer += pieces_[static_cast<std::size_t>(rt)];
    const int32_t id = lookup(buffer);
    if (id >= 0 && scores_[static_cast<std::size_t>(id)] > -1e10f) {
      pairs.push({scores_[static_cast<std::size_t>(id)], left, right, lt, rt, id});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i, i + 1);
  while (!pairs.empty()) {
    const Pair p = pairs.top();
    pairs.pop();
    const auto l = static_cast<std::size_t>(p.left), r = static_cast<std::size_t>(p.right);
    if (next[l] != p.right || tokens[l] != p.left_token || tokens[r] != p.right_token) continue;  // stale
    tokens[l] = p.id;
    tokens[r] = -1;  // merged away
    next[l] = next[r];
    if (next[l] >= 0) prev[static_cast<std::size_t>(next[l])] = p.left;
    if (prev[l] >= 0) offer(prev[l], p.left);
    if (next[l] >= 0) offer(p.left, next[l]);
  }
  std::vector<int32_t> merged;
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = next[static_cast<std::size_t>(i)]) {
    merged.push_back(tokens[static_cast<std::size_t>(i)]);
  }
  if (eos) merged.push_back(kEosToken);
  return merged;
}

std::string_view Tokenizer::decode(int32_t prev_token, int32_t token) const {
  std::string_view piece = pieces_.at(static_cast<std::size_t>(token));
  // SentencePiece strips the space that follows BOS.
  if (prev_token == kBosToken && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
  const int byte = raw_byte_of(piece);
  if (byte >= 0) {
    // run.c returns a C string, so the raw byte 0 is the empty piece.
    return std::string_view(byte_pieces_).substr(static_cast<std::size_t>(2 * byte), byte == 0 ? 0 : 1);
  }
  return piece;
}

void Tokenizer::append_printable(std::string& out, std::string_view piece) {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    const auto byte = static_cast<unsigned char>(piece.front());
    if (!(std::isprint(byte) || std::isspace(byte))) return;  // control bytes would garble a terminal
  }
  out.append(piece);
}

}  // namespace hgca::model
