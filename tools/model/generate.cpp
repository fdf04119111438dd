// Greedy generation (llama2.c's `generate`) and teacher-forced fidelity against exact attention.
#include "model/generate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "model/exact_attention.hpp"

namespace hgca::model {
namespace {

// run.c's sample_argmax: the first index of the largest logit.
int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// log softmax in double, so that the KL and perplexity sums lose nothing to fp32.
std::vector<double> log_softmax(std::span<const float> logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - max);
  const double log_z = max + std::log(sum);
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = logits[i] - log_z;
  return out;
}

// Logits that are not all finite would be argmax'd into token 0 and read as text: an error instead.
Status finite_logits(std::span<const float> logits, std::size_t pos, const char* who) {
  if (std::all_of(logits.begin(), logits.end(), [](float l) { return std::isfinite(l); })) return Status::ok();
  return {StatusCode::kInvalidArgument,
          fmt::format("{}: the logits at position {} are not finite (NaN or infinity): the checkpoint's activations "
                      "overflow fp32 there, or the attention gave a non-finite output", who, pos)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Status generate_greedy(Model& model, const Tokenizer& tokenizer, AttentionBackend& attention, SeqId seq_id,
                       std::string_view prompt, const GenerateOptions& options, Generation* out) {
  const Config& c = model.config();
  if (options.steps < 1 || options.steps > c.seq_len) {
    return {StatusCode::kInvalidArgument,
            fmt::format("generate: steps = {}, expected 1..{} (the model's seq_len)", options.steps, c.seq_len)};
  }
  if (tokenizer.vocab_size() != c.vocab_size) {
    return {StatusCode::kInvalidArgument, fmt::format("generate: the tokenizer has {} tokens, the model {}",
                                                      tokenizer.vocab_size(), c.vocab_size)};
  }
  Generation g;
  g.prompt_tokens = tokenizer.encode(prompt, /*bos=*/true, /*eos=*/false);
  const auto n_prompt = static_cast<int32_t>(g.prompt_tokens.size());
  g.first_sampled_pos = n_prompt - 1;

  // The prompt is one prefill step (hgca's append path); positions past `steps` never run.
  const int32_t n_prefill = std::min(n_prompt, options.steps);
  g.fed.assign(g.prompt_tokens.begin(), g.prompt_tokens.begin() + n_prefill);
  g.tokens.assign(g.prompt_tokens.begin() + 1, g.prompt_tokens.begin() + n_prefill);
  std::vector<float> logits;
  const SeqId ids[] = {seq_id};
  int32_t n_new[] = {n_prefill};
  int32_t start_pos[] = {0};
  auto t0 = std::chrono::steady_clock::now();
  Status status = model.forward({ids, n_new, start_pos, g.fed}, attention, LogitsOf::kLastToken, &logits);
  if (!status) return status;
  if (status = finite_logits(logits, static_cast<std::size_t>(n_prefill - 1), "generate"); !status) return status;
  g.prefill_seconds = seconds_since(t0);
  if (options.on_step) options.on_step(n_prefill);

  for (int32_t pos = n_prefill - 1;; ++pos) {  // `logits` are those of position `pos`
    int32_t next = 0;
    if (pos < n_prompt - 1) {
      next = g.prompt_tokens[static_cast<std::size_t>(pos) + 1];
    } else {
      next = argmax(logits);
      g.sampled.push_back(next);
      if (options.keep_logits) g.sampled_logits.insert(g.sampled_logits.end(), logits.begin(), logits.end());
    }
    if (next == kBosToken) break;  // the model ended the story
    g.tokens.push_back(next);
    if (pos + 1 >= options.steps) break;
    g.fed.push_back(next);
    n_new[0] = 1;
    start_pos[0] = pos + 1;
    t0 = std::chrono::steady_clock::now();
    status = model.forward({ids, n_new, start_pos, std::span<const int32_t>(&g.fed.back(), 1)}, attention,
                           LogitsOf::kLastToken, &logits);
    if (!status) return status;
    if (status = finite_logits(logits, static_cast<std::size_t>(pos) + 1, "generate"); !status) return status;
    g.decode_seconds.push_back(seconds_since(t0));
    if (options.on_step) options.on_step(pos + 2);
  }

  int32_t prev = kBosToken;
  for (int32_t token : g.tokens) {
    Tokenizer::append_printable(g.text, tokenizer.decode(prev, token));
    prev = token;
  }
  *out = std::move(g);
  return Status::ok();
}

Status compare_with_exact(Model& model, const Generation& generation, Fidelity* out) {
  const Config& c = model.config();
  const std::size_t n = generation.sampled.size();
  if (n == 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("compare_with_exact: no position sampled its next token (the prompt's {} tokens fill all "
                        "steps); raise steps", generation.prompt_tokens.size())};
  }
  if (generation.sampled_logits.size() != n * static_cast<std::size_t>(c.vocab_size)) {
    return {StatusCode::kInvalidArgument,
            "compare_with_exact: the generation kept no logits (generate with keep_logits = true)"};
  }
  ExactAttention exact(model.attention_shape());
  constexpr SeqId kSeq = 0;
  Status status = exact.add_sequence(kSeq);
  if (!status) return status;
  const SeqId ids[] = {kSeq};
  const int32_t n_new[] = {static_cast<int32_t>(generation.fed.size())};
  const int32_t start_pos[] = {0};
  std::vector<float> exact_logits;  // [fed, vocab]
  status = model.forward({ids, n_new, start_pos, generation.fed}, exact, LogitsOf::kEveryToken, &exact_logits);
  if (!status) return status;

  const auto V = static_cast<std::size_t>(c.vocab_size);
  int64_t agree = 0;
  double kl_sum = 0.0, nll_exact = 0.0, nll_hybrid = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t pos = static_cast<std::size_t>(generation.first_sampled_pos) + i;
    const std::span<const float> le(exact_logits.data() + pos * V, V);
    const std::span<const float> lh(generation.sampled_logits.data() + i * V, V);
    if (status = finite_logits(le, pos, "compare_with_exact (exact attention)"); !status) return status;
    const auto chosen = static_cast<std::size_t>(generation.sampled[i]);
    if (static_cast<std::size_t>(argmax(le)) == chosen) ++agree;
    const std::vector<double> lpe = log_softmax(le), lph = log_softmax(lh);
    for (std::size_t j = 0; j < V; ++j) kl_sum += std::exp(lpe[j]) * (lpe[j] - lph[j]);
    nll_exact -= lpe[chosen];
    nll_hybrid -= lph[chosen];
  }
  const auto count = static_cast<double>(n);
  out->positions = static_cast<int64_t>(n);
  out->top1_agreement = static_cast<double>(agree) / count;
  out->kl_mean = kl_sum / count;
  out->ppl_exact = std::exp(nll_exact / count);
  out->ppl_hybrid = std::exp(nll_hybrid / count);
  return Status::ok();
}

}  // namespace hgca::model
