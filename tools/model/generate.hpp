// Greedy generation as llama2.c's `generate` (whole prompt as one prefill step), and its fidelity
// against exact attention.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/attention_backend.hpp"
#include "model/model.hpp"
#include "model/tokenizer.hpp"

namespace hgca::model {

struct GenerateOptions {
  /// Positions to run, the prompt's included (run.c's `steps`), in [1, seq_len].
  int32_t steps = 256;
  /// Keep the logits of every sampled position (for fidelity metrics).
  bool keep_logits = false;
  /// Called after each forward step with the number of positions run so far.
  std::function<void(int32_t positions)> on_step;
};

struct Generation {
  std::vector<int32_t> prompt_tokens;  ///< the encoded prompt, BOS first
  std::vector<int32_t> fed;            ///< the token fed at each position run, BOS first
  std::vector<int32_t> tokens;         ///< every token after BOS, as run.c prints them: prompt, then generated
  std::string text;                    ///< what run.c prints for `tokens` (without its final newline)
  int32_t first_sampled_pos = 0;       ///< positions from here on chose their next token by argmax
  std::vector<int32_t> sampled;        ///< those choices, one per sampled position (a final BOS included)
  std::vector<float> sampled_logits;   ///< [sampled.size(), vocab], when keep_logits
  double prefill_seconds = 0.0;
  std::vector<double> decode_seconds;  ///< wall time of each one-token step after the prefill
};

/// Greedy decoding: the prompt (with BOS) is fed as one step, then one argmax token per step,
/// until BOS is chosen or `steps` positions were run. `seq_id` must be live in `attention` and
/// empty; it stays live afterwards (its statistics are the caller's to read, then release).
Status generate_greedy(Model& model, const Tokenizer& tokenizer, AttentionBackend& attention, SeqId seq_id,
                       std::string_view prompt, const GenerateOptions& options, Generation* out);

/// Fidelity of a generation against exact attention on the same tokens (teacher forcing), over
/// the positions that sampled their next token.
struct Fidelity {
  int64_t positions = 0;
  double top1_agreement = 0.0;  ///< fraction where argmax(exact) equals the token that was chosen
  double kl_mean = 0.0;         ///< mean KL(exact ‖ generation) of the next-token distributions, nats
  double ppl_exact = 0.0;       ///< perplexity of the chosen tokens under exact attention
  double ppl_hybrid = 0.0;      ///< ... and under the generation's own logits
};

/// Runs `fed` through `model` with a fresh ExactAttention; needs a generation made with keep_logits.
Status compare_with_exact(Model& model, const Generation& generation, Fidelity* out);

}  // namespace hgca::model
