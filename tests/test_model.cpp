// The real-model test: stories260K (llama2.c) decoded greedily through exact attention and through
// hgca must reproduce the known-good texts of shared/data/stories260K/README.md byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "data_dir.hpp"
#include "hgca/hgca.hpp"
#include "model/checkpoint.hpp"
#include "model/exact_attention.hpp"
#include "model/generate.hpp"
#include "model/hgca_attention.hpp"
#include "model/model.hpp"
#include "model/tokenizer.hpp"

namespace hgca::model {
namespace {

const std::string kDataDir = hgca::test::data_dir("HGCA_SHARED_DIR", HGCA_SHARED_DIR) + "/data/stories260K";
const std::string kCheckpointPath = kDataDir + "/stories260K.bin";
const std::string kTokenizerPath = kDataDir + "/tok512.bin";

// The README calls this "the first 48 tokens", but it is 61 tokens after BOS: llama2.c prints
// exactly this text with `-n 61` (48 stops at "She wanted to").
const std::string kFromBosText =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
    "big, red ball. She wanted to play with it, but it was too high.";
constexpr int32_t kFromBosSteps = 61;
const std::string kZooText =
    "Zoo was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She "
    "wanted to play with it, but she didn't want to play with";
constexpr int32_t kZooSteps = 60;

struct Case {
  const char* prompt;
  int32_t steps;
  const std::string* text;
};
const Case kCases[] = {{"", kFromBosSteps, &kFromBosText}, {"Zoo", kZooSteps, &kZooText}};

class StoriesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kCheckpointPath) || !std::filesystem::exists(kTokenizerPath)) {
      skip_reason_ = "stories260K not found under " + kDataDir + " (shared/ is expected beside the checkout, or named by HGCA_SHARED_DIR)";
      return;
    }
    Status status = Checkpoint::load(kCheckpointPath, &checkpoint_);
    ASSERT_TRUE(status) << status.message();
    status = Tokenizer::load(kTokenizerPath, checkpoint_->config().vocab_size, &tokenizer_);
    ASSERT_TRUE(status) << status.message();
  }
  static void TearDownTestSuite() {
    tokenizer_.reset();
    checkpoint_.reset();
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_NE(checkpoint_, nullptr);
    model_ = std::make_unique<Model>(*checkpoint_);
  }

  Options hgca_options(int32_t window_blocks, int32_t block_tokens, float beta) const {
    const AttentionShape shape = model_->attention_shape();
    Options o;
    o.n_layers = shape.n_layers;
    o.n_q_heads = shape.n_q_heads;
    o.n_kv_heads = shape.n_kv_heads;
    o.head_dim = shape.head_dim;
    o.dtype = DType::kFloat32;
    o.backend = test::kBackend;
    o.window_blocks = window_blocks;
    o.block_tokens = block_tokens;
    o.beta = beta;
    o.deterministic = true;  // re-evaluations publish before the next call: reproducible texts
    return o;
  }

  // Greedy generation of one case on a fresh sequence of `attention`, released afterwards.
  Generation generate(AttentionBackend& attention, const Case& c, bool keep_logits = false) {
    constexpr SeqId kSeq = 42;
    Generation g;
    Status status = attention.add_sequence(kSeq);
    EXPECT_TRUE(status) << status.message();
    GenerateOptions options;
    options.steps = c.steps;
    options.keep_logits = keep_logits;
    status = generate_greedy(*model_, *tokenizer_, attention, kSeq, c.prompt, options, &g);
    EXPECT_TRUE(status) << status.message();
    status = attention.release_sequence(kSeq);
    EXPECT_TRUE(status) << status.message();
    return g;
  }

  static inline std::unique_ptr<Checkpoint> checkpoint_;
  static inline std::unique_ptr<Tokenizer> tokenizer_;
  static inline std::string skip_reason_;
  std::unique_ptr<Model> model_;
};

TEST_F(StoriesTest, HeaderMatchesReadme) {
  const Config& c = checkpoint_->config();
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 512);
  EXPECT_TRUE(c.shared_classifier);
  EXPECT_EQ(c.head_size(), 8);
}

TEST_F(StoriesTest, TokenizerRoundTripsAndFallsBackToBytes) {
  const std::vector<int32_t> zoo = tokenizer_->encode("Zoo", /*bos=*/true, /*eos=*/true);
  ASSERT_GE(zoo.size(), 3u);
  EXPECT_EQ(zoo.front(), kBosToken);
  EXPECT_EQ(zoo.back(), kEosToken);

  // "ê" is not in this 512-token vocabulary: its two UTF-8 bytes become byte tokens (byte + 3).
  const std::string text = "Tom ate a cr\xC3\xAApe.";
  const std::vector<int32_t> ids = tokenizer_->encode(text, /*bos=*/true, /*eos=*/false);
  std::string decoded;
  int32_t prev = ids.front();
  bool saw_byte_token = false;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    saw_byte_token |= ids[i] == 0xC3 + 3 || ids[i] == 0xAA + 3;
    decoded.append(tokenizer_->decode(prev, ids[i]));  // no printable filter: the raw bytes of ê
    prev = ids[i];
  }
  EXPECT_TRUE(saw_byte_token);
  EXPECT_EQ(decoded, text);
  EXPECT_EQ(tokenizer_->encode("", true, false), std::vector<int32_t>{kBosToken});
}

/// run.c's encode as run.c writes it, over a tokenizer file read here: the dummy prefix, UTF-8 code
/// points looked up whole or as bytes, then after every merge a rescan of every pair for the best
/// score (the leftmost of equals, above -1e10).
std::vector<int32_t> run_c_encode(const std::string& tokenizer_path, int32_t vocab_size, const std::string& text) {
  std::ifstream in(tokenizer_path, std::ios::binary);
  int32_t max_len = 0;
  in.read(reinterpret_cast<char*>(&max_len), sizeof max_len);
  std::vector<std::string> pieces(static_cast<std::size_t>(vocab_size));
  std::vector<float> scores(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    int32_t len = 0;
    in.read(reinterpret_cast<char*>(&scores[i]), sizeof(float));
    in.read(reinterpret_cast<char*>(&len), sizeof len);
    pieces[i].resize(static_cast<std::size_t>(len));
    in.read(pieces[i].data(), len);
  }
  const auto id_of = [&](const std::string& piece) {
    const auto it = std::find(pieces.begin(), pieces.end(), piece);
    return it == pieces.end() ? -1 : static_cast<int32_t>(it - pieces.begin());
  };
  std::vector<int32_t> tokens{kBosToken};
  if (!text.empty()) tokens.push_back(id_of(" "));
  for (std::size_t c = 0; c < text.size();) {
    std::size_t end = c + 1;
    while (end < text.size() && end - c < 4 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    const std::string point = text.substr(c, end - c);
    if (const int32_t id = id_of(point); id >= 0) {
      tokens.push_back(id);
    } else {
      for (char byte : point) tokens.push_back(static_cast<unsigned char>(byte) + 3);
    }
    c = end;
  }
  for (;;) {
    float best = -1e10f;
    int32_t best_id = -1;
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const int32_t id = id_of(pieces[static_cast<std::size_t>(tokens[i])] + pieces[static_cast<std::size_t>(tokens[i + 1])]);
      if (id >= 0 && scores[static_cast<std::size_t>(id)] > best) {
        best = scores[static_cast<std::size_t>(id)];
        best_id = id;
        at = i;
      }
    }
    if (best_id < 0) break;
    tokens[at] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  return tokens;
}

// The encoder merges from a heap (run.c rescans every pair after each merge: quadratic in the prompt);
// its tokens are run.c's on random texts of words, spaces, punctuation, repeated runs, multi-byte
// UTF-8 and stray bytes.
TEST_F(StoriesTest, EncodingIsRunCsOnRandomTexts) {
  const std::vector<std::string> parts = {"the", " ", "a", "Once", " upon", "ll", "e", ",", ".", "!", "\n", "  ",
                                          "aaaa", "\xC3\xAA", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "\xFF", "\x80",
                                          "Lily", "ing", "0", "zz"};
  std::mt19937 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const int n = static_cast<int>(rng() % (trial < 100 ? 20 : 200));
    for (int i = 0; i < n; ++i) text += parts[rng() % parts.size()];
    EXPECT_EQ(tokenizer_->encode(text, /*bos=*/true, /*eos=*/false),
              run_c_encode(kTokenizerPath, checkpoint_->config().vocab_size, text))
        << "text: " << text;
  }
}

TEST_F(StoriesTest, ExactAttentionReproducesReadmeTexts) {
  for (const Case& c : kCases) {
    ExactAttention exact(model_->attention_shape());
    const Generation g = generate(exact, c);
    EXPECT_EQ(g.text, *c.text) << "prompt '" << c.prompt << "', " << c.steps << " steps";
    EXPECT_EQ(g.tokens.size(), static_cast<std::size_t>(c.steps));
  }
}

// beta = 0 keeps every store entry in the context set, so hgca's attention is exact attention
// split in two and merged by LSE: the texts must not change.
TEST_F(StoriesTest, HgcaWholeWindowReproducesReadmeTexts) {
  std::unique_ptr<HgcaAttention> attention;
  Status status = HgcaAttention::create(hgca_options(16, 64, 0.0f), &attention);  // W = 1024 ≥ seq_len
  ASSERT_TRUE(status) << status.message();
  for (const Case& c : kCases) {
    const Generation g = generate(*attention, c);
    EXPECT_EQ(g.text, *c.text) << "prompt '" << c.prompt << "'";
  }
}

TEST_F(StoriesTest, HgcaSmallWindowWithBetaZeroReproducesReadmeTexts) {
  std::unique_ptr<HgcaAttention> attention;
  Status status = HgcaAttention::create(hgca_options(4, 8, 0.0f), &attention);  // W = 32: most history is in the store
  ASSERT_TRUE(status) << status.message();
  for (const Case& c : kCases) {
    constexpr SeqId kSeq = 7;
    ASSERT_TRUE(attention->add_sequence(kSeq));
    GenerateOptions options;
    options.steps = c.steps;
    Generation g;
    status = generate_greedy(*model_, *tokenizer_, *attention, kSeq, c.prompt, options, &g);
    ASSERT_TRUE(status) << status.message();
    EXPECT_EQ(g.text, *c.text) << "prompt '" << c.prompt << "'";

    // The store and the sparse path were really used, and beta = 0 selected all of the store.
    for (int32_t l = 0; l < model_->config().n_layers; ++l) {
      LayerStats stats;
      ASSERT_TRUE(attention->runtime().layer_stats(l, &stats));
      EXPECT_GT(stats.store_tokens, 0) << "layer " << l;
      EXPECT_EQ(stats.window_tokens + stats.store_tokens, static_cast<int64_t>(g.fed.size())) << "layer " << l;
      EXPECT_DOUBLE_EQ(stats.selected_fraction, 1.0) << "layer " << l;
    }
    ASSERT_TRUE(attention->release_sequence(kSeq));
  }
}

// With the paper's defaults (alpha 0.1, beta 1) and a 64-token window, a 512-position story stays
// close to exact attention, and far closer than the same window without the store (S empty: what a
// selection that picks nothing or a merge that drops the CPU's part gives). The absolute bounds
// alone pass that window-only run (KL 0.009, top-1 0.978; the method's: 0.0007, 0.989).
TEST_F(StoriesTest, HgcaDefaultMethodStaysCloseToExact) {
  auto fidelity = [&](const Options& o) {
    std::unique_ptr<HgcaAttention> attention;
    Status status = HgcaAttention::create(o, &attention);
    EXPECT_TRUE(status) << status.message();
    Fidelity f;
    if (!attention) return f;
    const Generation g = generate(*attention, {"Once upon a time", 512, nullptr}, /*keep_logits=*/true);
    status = compare_with_exact(*model_, g, &f);
    EXPECT_TRUE(status) << status.message();
    return f;
  };
  const Fidelity f = fidelity(hgca_options(8, 8, Options{}.beta));
  Options window_only = hgca_options(8, 8, 1e9f);  // no entry passes beta / n_ref
  window_only.min_keep = 0;
  const Fidelity w = fidelity(window_only);
  EXPECT_GT(f.positions, 100);
  EXPECT_GE(f.top1_agreement, 0.9);
  EXPECT_LT(f.kl_mean, 0.05);
  EXPECT_NEAR(f.ppl_hybrid / f.ppl_exact, 1.0, 0.1);
  EXPECT_LT(f.kl_mean, w.kl_mean / 4) << "window only: KL " << w.kl_mean;
  EXPECT_GE(f.top1_agreement, w.top1_agreement) << "window only: top-1 " << w.top1_agreement;
}

// Sequences of different lengths in one ragged step give each the logits it gets alone.
TEST_F(StoriesTest, RaggedBatchMatchesSeparateSteps) {
  const std::vector<int32_t> a = tokenizer_->encode("Once upon a time", true, false);
  const std::vector<int32_t> b = tokenizer_->encode("Zoo", true, false);
  const Config& c = model_->config();
  const auto V = static_cast<std::size_t>(c.vocab_size);

  const auto alone = [&](const std::vector<int32_t>& tokens) {
    ExactAttention exact(model_->attention_shape());
    EXPECT_TRUE(exact.add_sequence(0));
    const SeqId ids[] = {0};
    const int32_t n_new[] = {static_cast<int32_t>(tokens.size())};
    const int32_t start[] = {0};
    std::vector<float> logits;
    EXPECT_TRUE(model_->forward({ids, n_new, start, tokens}, exact, LogitsOf::kLastToken, &logits));
    return logits;
  };
  ExactAttention exact(model_->attention_shape());
  ASSERT_TRUE(exact.add_sequence(3));
  ASSERT_TRUE(exact.add_sequence(9));
  const SeqId ids[] = {3, 9};
  const int32_t n_new[] = {static_cast<int32_t>(a.size()), static_cast<int32_t>(b.size())};
  const int32_t start[] = {0, 0};
  std::vector<int32_t> tokens = a;
  tokens.insert(tokens.end(), b.begin(), b.end());
  std::vector<float> logits;
  Status status = model_->forward({ids, n_new, start, tokens}, exact, LogitsOf::kLastToken, &logits);
  ASSERT_TRUE(status) << status.message();
  ASSERT_EQ(logits.size(), 2 * V);
  const std::vector<float> la = alone(a), lb = alone(b);
  for (std::size_t j = 0; j < V; ++j) {
    EXPECT_NEAR(logits[j], la[j], 1e-4f) << "sequence 3, logit " << j;
    EXPECT_NEAR(logits[V + j], lb[j], 1e-4f) << "sequence 9, logit " << j;
  }
}

// --- loader errors: they name the file, what was expected and what was found ---

class LoaderErrorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!scratch_.empty()) std::filesystem::remove(scratch_);
  }
  // A copy of the first `bytes` bytes of `source` in a temporary file.
  std::string truncated_copy(const std::string& source, std::size_t bytes) {
    std::ifstream in(source, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    data.resize(std::min(bytes, data.size()));
    return file_with(data);
  }
  // A temporary file holding `data`.
  std::string file_with(const std::string& data) {
    scratch_ = (std::filesystem::temp_directory_path() /
                ("hgca_model_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
    std::ofstream(scratch_, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
    return scratch_;
  }
  std::string scratch_;
};

TEST_F(LoaderErrorTest, MissingCheckpointIsNotFound) {
  const std::string path = "/nonexistent/dir/stories.bin";
  std::unique_ptr<Checkpoint> ckpt;
  const Status status = Checkpoint::load(path, &ckpt);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("No such file"), std::string::npos) << status.message();
  EXPECT_EQ(ckpt, nullptr);
}

TEST_F(LoaderErrorTest, TruncatedCheckpointNamesExpectedAndFoundSizes) {
  if (!std::filesystem::exists(kCheckpointPath)) GTEST_SKIP() << "stories260K not found under " << kDataDir;
  const std::string path = truncated_copy(kCheckpointPath, 1000000);
  std::unique_ptr<Checkpoint> ckpt;
  const Status status = Checkpoint::load(path, &ckpt);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("expects 1056540 bytes"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("found 1000000 bytes"), std::string::npos) << status.message();
  EXPECT_EQ(ckpt, nullptr);
}

// A checkpoint is memory-mapped: a pipe (`--model <(…)`) is named as such, not as an empty file.
TEST_F(LoaderErrorTest, CheckpointFromAPipeIsNamed) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::unique_ptr<Checkpoint> ckpt;
  const Status status = Checkpoint::load("/proc/self/fd/" + std::to_string(fds[0]), &ckpt);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("expected a regular file (it is memory-mapped), found a pipe"), std::string::npos)
      << status.message();
  EXPECT_EQ(ckpt, nullptr);
}

// A NaN or infinite weight is refused at load, named by tensor, layer and element (it used to run to
// the end and report NaN logits).
TEST_F(LoaderErrorTest, NonFiniteWeightIsNamed) {
  if (!std::filesystem::exists(kCheckpointPath)) GTEST_SKIP() << "stories260K not found under " << kDataDir;
  std::unique_ptr<Checkpoint> good;
  ASSERT_TRUE(Checkpoint::load(kCheckpointPath, &good).is_ok());
  const Config& c = good->config();
  const Weights& w = good->weights();
  // File offset of a weight: the header, then the tensors from the token embedding on.
  auto offset = [&](const float* x) { return 28 + (x - w.token_embedding) * sizeof(float); };
  std::ifstream in(kCheckpointPath, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Poisoned {
    const float* at;
    float value;
    std::string expected;
  };
  const int64_t wk_layer = int64_t{c.kv_dim()} * c.dim;
  const Poisoned cases[] = {
      {w.wk + wk_layer + 5, std::numeric_limits<float>::quiet_NaN(), "weight wk of layer 1 holds nan at element 5"},
      {w.rms_final + 3, -std::numeric_limits<float>::infinity(), "weight rms_final holds -inf at element 3"},
  };
  for (const Poisoned& k : cases) {
    std::string data = bytes;
    std::memcpy(data.data() + offset(k.at), &k.value, sizeof(float));
    std::unique_ptr<Checkpoint> ckpt;
    const Status status = Checkpoint::load(file_with(data), &ckpt);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(k.expected), std::string::npos) << status.message();
    EXPECT_EQ(ckpt, nullptr);
  }
  // A classifier of its own (negative vocab_size on disk, the matrix at the end): the embedding
  // again, poisoned at element 7.
  std::string separate = bytes;
  const int32_t negative_vocab = -c.vocab_size;
  std::memcpy(separate.data() + 5 * sizeof(int32_t), &negative_vocab, sizeof negative_vocab);
  std::string wcls = bytes.substr(offset(w.token_embedding), int64_t{c.vocab_size} * c.dim * sizeof(float));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(wcls.data() + 7 * sizeof(float), &nan, sizeof nan);
  std::unique_ptr<Checkpoint> ckpt;
  const Status status = Checkpoint::load(file_with(separate + wcls), &ckpt);
  EXPECT_NE(status.message().find("weight wcls holds nan at element 7"), std::string::npos) << status.message();
  EXPECT_EQ(ckpt, nullptr);
}

TEST_F(LoaderErrorTest, CheckpointShorterThanHeader) {
  if (!std::filesystem::exists(kCheckpointPath)) GTEST_SKIP() << "stories260K not found under " << kDataDir;
  const std::string path = truncated_copy(kCheckpointPath, 10);
  std::unique_ptr<Checkpoint> ckpt;
  const Status status = Checkpoint::load(path, &ckpt);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("28-byte header"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("10 bytes"), std::string::npos) << status.message();
}

TEST_F(LoaderErrorTest, TruncatedTokenizer) {
  if (!std::filesystem::exists(kTokenizerPath)) GTEST_SKIP() << "stories260K not found under " << kDataDir;
  const std::string path = truncated_copy(kTokenizerPath, 3000);
  std::unique_ptr<Tokenizer> tok;
  const Status status = Tokenizer::load(path, 512, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("expected"), std::string::npos) << status.message();
  EXPECT_EQ(tok, nullptr);
}

/// A tokenizer file as llama2.c writes it: max_token_length, then per token its score, length, bytes.
std::string tokenizer_bytes(int32_t max_token_length, const std::vector<std::pair<int32_t, std::string>>& tokens) {
  std::string out;
  const auto put = [&out](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(max_token_length);
  for (const auto& [length, piece] : tokens) {
    put(0.0f);
    put(length);
    out += piece;
  }
  return out;
}

// Lengths a corrupt file claims are checked against the file before anything is allocated.
TEST_F(LoaderErrorTest, TokenizerLengthsTheFileCannotHoldAreRefused) {
  std::unique_ptr<Tokenizer> tok;
  Status status = Tokenizer::load(file_with(tokenizer_bytes(-1, {{1, "a"}})), 3, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("max_token_length = -1, expected ≥ 0"), std::string::npos) << status.message();
  const int32_t huge = std::numeric_limits<int32_t>::max();
  status = Tokenizer::load(file_with(tokenizer_bytes(huge, {{huge, "abc"}})), 3, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("expected 2147483647 bytes of token 0, the file ends first"), std::string::npos)
      << status.message();
  EXPECT_EQ(tok, nullptr);
}

// A tokenizer read from a pipe (`--tokenizer <(…)`), which has no size to check lengths against,
// loads as from a file.
TEST_F(LoaderErrorTest, ATokenizerFromAPipeLoads) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string bytes = tokenizer_bytes(5, {{5, "<unk>"}, {3, "<s>"}, {4, "</s>"}, {2, "ab"}});
  std::thread writer([&] {
    EXPECT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fds[1]);
  });
  std::unique_ptr<Tokenizer> tok;
  const Status status = Tokenizer::load("/proc/self/fd/" + std::to_string(fds[0]), 4, &tok);
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_EQ(tok->decode(0, 3), "ab");
}

// A vocabulary too small for the byte tokens (ids 3..258) encodes what it lacks as <unk>.
TEST_F(LoaderErrorTest, ASmallVocabularyEncodesUnknownBytesAsUnk) {
  std::unique_ptr<Tokenizer> tok;
  const Status status = Tokenizer::load(file_with(tokenizer_bytes(5, {{5, "<unk>"}, {3, "<s>"}, {4, "</s>"}, {1, "o"}})), 4, &tok);
  ASSERT_TRUE(status.is_ok()) << status.message();
  const std::vector<int32_t> tokens = tok->encode("Zoo", /*bos=*/true, /*eos=*/false);
  EXPECT_EQ(tokens, (std::vector<int32_t>{kBosToken, kUnkToken, kUnkToken, 3, 3}));  // BOS, " ", "Z", "o", "o"
}

// What a tokenizer must hold for the model: the three fixed ids (a vocabulary of 1 crashed the
// encoder on BOS), finite scores (NaN never won a merge: prompts stayed bytes), and no token past the
// model's vocabulary (another model's tokenizer loaded in silence).
TEST_F(LoaderErrorTest, ATokenizerThatCannotServeTheModelIsRefused) {
  const std::vector<std::pair<int32_t, std::string>> three = {{5, "<unk>"}, {3, "<s>"}, {4, "</s>"}};
  std::unique_ptr<Tokenizer> tok;
  Status status = Tokenizer::load(file_with(tokenizer_bytes(5, three)), 1, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("the model's vocab_size = 1, expected ≥ 3"), std::string::npos) << status.message();
  std::string scored = tokenizer_bytes(5, three);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(scored.data() + 4 + (4 + 4 + 5), &nan, sizeof nan);  // token 1's score
  status = Tokenizer::load(file_with(scored), 3, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("token 1 has score nan, expected a finite number"), std::string::npos)
      << status.message();
  auto four = three;
  four.emplace_back(1, "a");
  status = Tokenizer::load(file_with(tokenizer_bytes(5, four)), 3, &tok);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("the file goes on after the model's vocab_size = 3 tokens"), std::string::npos)
      << status.message();
  EXPECT_EQ(tok, nullptr);
  EXPECT_TRUE(Tokenizer::load(file_with(tokenizer_bytes(5, four)), 4, &tok).is_ok());
}

// Finite weights whose activations overflow give logits of NaN, which argmax read as token 0
// ("<unk>" after <unk>): the generation is an error naming the position instead.
TEST_F(LoaderErrorTest, LogitsThatAreNotFiniteEndTheGeneration) {
  if (!std::filesystem::exists(kCheckpointPath)) GTEST_SKIP() << "stories260K not found under " << kDataDir;
  std::unique_ptr<Checkpoint> good;
  ASSERT_TRUE(Checkpoint::load(kCheckpointPath, &good).is_ok());
  const Weights& w = good->weights();
  std::ifstream in(kCheckpointPath, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const float huge = 3e38f;
  std::memcpy(bytes.data() + 28 + (w.wq + 10 - w.token_embedding) * sizeof(float), &huge, sizeof huge);
  std::unique_ptr<Checkpoint> ckpt;
  ASSERT_TRUE(Checkpoint::load(file_with(bytes), &ckpt).is_ok());  // finite: the loader takes it
  std::unique_ptr<Tokenizer> tok;
  ASSERT_TRUE(Tokenizer::load(kTokenizerPath, ckpt->config().vocab_size, &tok).is_ok());
  Model model(*ckpt);
  ExactAttention exact(model.attention_shape());
  ASSERT_TRUE(exact.add_sequence(1).is_ok());
  GenerateOptions options;
  options.steps = 20;
  Generation g;
  const Status status = generate_greedy(model, *tok, exact, 1, "Once upon a time", options, &g);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("generate: the logits at position"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("are not finite"), std::string::npos) << status.message();
}

TEST_F(LoaderErrorTest, MissingTokenizerIsNotFound) {
  std::unique_ptr<Tokenizer> tok;
  const Status status = Tokenizer::load("/nonexistent/tok512.bin", 512, &tok);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("/nonexistent/tok512.bin"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace hgca::model
