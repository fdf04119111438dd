// hgca-decode: the standalone decode driver. Runs a built-in synthetic model-shaped workload, or a
// llama2.c checkpoint greedily, through hgca::Runtime and reports speed, KV placement and fidelity.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "hgca/hgca.hpp"
#include "model/checkpoint.hpp"
#include "model/generate.hpp"
#include "model/hgca_attention.hpp"
#include "model/model.hpp"
#include "model/tokenizer.hpp"
#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/output.hpp"
#include "common/progress.hpp"
#include "devmem/devmem.hpp"
#include "synthetic.hpp"

namespace {

using hgca::Status;

constexpr const char* kDescription =
    R"(hgca-decode runs a decode loop through the hgca runtime (HGCA: recent tokens in a
window with exact dense attention, older ones in a DRAM store where the CPU attends sparsely to a
per-head context set chosen by moving-average attention weight (MAW), the two merged by LSE).

Without --model it runs a built-in synthetic workload shaped like a model (4 layers, 16 query
heads, 4 KV heads, head dim 64, bf16, batch 2, a 2048-token prompt fed as append steps of 256,
then 64 decode steps, window 8 blocks x 64 tokens): each (layer, KV head) has a topic direction
that the queries and a few percent of salient keys share, so selection has something to find.
With --model and --tokenizer it decodes a llama2.c float32 checkpoint greedily like llama2.c's
run.c (--steps counts positions including the prompt; the prompt is one prefill step) and prints
the text.

It reports decode tokens/s, time between tokens (p50, p99, per decode step of the batch), the
share of it the runtime's streams spent moving KV out of the window (synthetic workload), window,
store and context-set sizes, the selected fraction, the DRAM store's memory (chunks held and used,
and how often an allocation had to take a chunk itself), the backend, the CPU threads the runtime
runs and the method's parameters.
--json prints the same as one JSON object on stdout: text, tokens (ids of every position after
BOS), tokens_per_s, tbt_ms_p50, tbt_ms_p99 (null without decode steps), tbt_ms (every decode step), enqueue_ms (of each decode
step, the time until end_step returned; synthetic workload), decode_transfer_ms, transfer_share,
selected_fraction, store_memory (chunks, registered_chunks, reserved_bytes, used_bytes,
sync_growths, background_growths, released_chunks), decode_sync_growths (synthetic workload),
threads (asked) and threads_used, cpu (the engine's isa, kv_split_tokens, max_packed_heads,
numa_placement, numa_bound, threads_per_node), config (HGCA_CONFIG's file or null), config_flag
(--config's file or null), alpha, beta, window_blocks, block_tokens and more; with --compare-exact also top1_agreement,
kl_mean, ppl_exact, ppl_hybrid (--compare-exact needs --model). For the synthetic workload text is
"" and tokens is [].)";

constexpr const char* kExamples = R"(Examples:
  hgca-decode
  hgca-decode --batch 4 --context 8192 --threads 8 --json
  hgca-decode --model stories260K.bin --tokenizer tok512.bin --prompt "Zoo" --steps 60 --beta 0
  hgca-decode --model stories260K.bin --tokenizer tok512.bin --prompt "Once upon a time" \
              --steps 512 --window-blocks 8 --block-tokens 8 --compare-exact --json

Environment:
  HGCA_CONFIG=FILE  hgca-tune's configuration (its --out), applied over the execution options
                    above (threads, split, packing, ISA, placement, overflow rates) when the
                    runtime is created, flags and --config included: --config FILE lets the
                    flags given win)";

struct Cli {
  std::string model_path;
  std::string tokenizer_path;
  std::string prompt;
  int32_t steps = 256;
  bool compare_exact = false;
  hgca::Options options;  // method and execution; the model shape comes from the workload
  std::string dtype;      // empty: f32 for --model, bf16 for the synthetic workload
  std::string backend = "auto";
  std::string cuda_wait = "auto";
  std::string overflow = "auto";  // --overflow, into options.overflow after parsing
  std::string config_path;        // --config
  std::string handoff = "auto";   // --handoff, into options.handoff after parsing
  std::string store_writes = "auto";  // --store-writes, into options.store_writes after parsing
  int32_t staging_mib = static_cast<int32_t>(hgca::Options{}.staging_limit_bytes >> 20);  // --staging-mib
  bool window_blocks_given = false;
  int32_t layers = 4, q_heads = 16, kv_heads = 4, head_dim = 64;
  hgca::decode::SyntheticWorkload synthetic;
  bool json = false;
};

// Everything a run reports.
struct Summary {
  std::string workload;
  hgca::Options options;  // as the runtime holds them
  hgca::Backend backend = hgca::Backend::kAuto;  // the one the runtime resolved to
  hgca::HostHandoff handoff = hgca::HostHandoff::kAuto;  // likewise (kAuto: the host backend)
  hgca::CpuStats cpu;       // the CPU pool and engine as the runtime set them up
  int32_t threads_used = 0;  // the CPU pool's, over its nodes (options.threads is what was asked)
  std::string cuda_wait;  // --cuda-wait
  std::string config_path;  // --config
  int32_t batch = 1;
  int64_t prefill_tokens = 0;  // per sequence
  int32_t prefill_steps = 0;
  double prefill_seconds = 0.0;
  std::vector<double> decode_seconds;
  std::vector<double> decode_enqueue_seconds;  // synthetic workload only
  double decode_transfer_seconds = 0.0;  // synthetic workload only
  std::optional<int64_t> decode_sync_growths;  // synthetic workload only
  hgca::StoreMemoryStats store_memory;  // every node's, at the end (before the sequences are released)
  std::vector<hgca::LayerStats> layers;
  std::string text;
  std::vector<int32_t> tokens;
  std::optional<hgca::model::Fidelity> fidelity;
};

/// The runtime's CPU side into the summary: its stats and the pool's threads over its nodes (none
/// where the runtime cannot say).
void record_cpu(const hgca::Runtime& runtime, Summary& s) {
  if (!runtime.cpu_stats(&s.cpu)) return;
  for (const auto& node : s.cpu.nodes) s.threads_used += node.threads;
}

/// The choice whose hgca::to_string is `name` (CLI11 has checked that it is one of them).
template <typename E>
E parse_choice(const std::string& name, std::initializer_list<E> choices) {
  for (E e : choices) {
    if (name == hgca::to_string(e)) return e;
  }
  return *choices.begin();
}

// Nearest-rank percentile of the step times, in ms; nullopt without samples.
std::optional<double> percentile_ms(std::vector<double> seconds, double p) {
  if (seconds.empty()) return std::nullopt;
  std::sort(seconds.begin(), seconds.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(seconds.size())));
  return 1e3 * seconds[std::clamp<std::size_t>(rank, 1, seconds.size()) - 1];
}

/// Tokens per second over the decode steps; nullopt without any (as the percentiles).
std::optional<double> decode_tokens_per_s(const Summary& s) {
  const double total = std::accumulate(s.decode_seconds.begin(), s.decode_seconds.end(), 0.0);
  if (total <= 0.0) return std::nullopt;
  return static_cast<double>(s.batch) * static_cast<double>(s.decode_seconds.size()) / total;
}

// Share of the decode steps' wall time that the runtime's streams spent moving KV out of the window.
double transfer_share(const Summary& s) {
  const double total = std::accumulate(s.decode_seconds.begin(), s.decode_seconds.end(), 0.0);
  return total > 0.0 ? s.decode_transfer_seconds / total : 0.0;
}

double mean_selected_fraction(const Summary& s) {
  double sum = 0.0;
  for (const auto& l : s.layers) sum += l.selected_fraction;
  return s.layers.empty() ? 0.0 : sum / static_cast<double>(s.layers.size());
}

struct Totals {
  int64_t window = 0, capacity = 0, store = 0, context = 0;  // tokens, summed over layers (and KV heads for context)
};
Totals totals(const Summary& s) {
  Totals t;
  for (const auto& l : s.layers) {
    t.window += l.window_tokens;
    t.capacity += l.window_capacity;
    t.store += l.store_tokens;
    t.context += std::accumulate(l.context_tokens.begin(), l.context_tokens.end(), int64_t{0});
  }
  return t;
}

Status collect_layer_stats(const hgca::Runtime& runtime, std::vector<hgca::LayerStats>* out) {
  out->resize(static_cast<std::size_t>(runtime.options().n_layers));
  for (int32_t l = 0; l < runtime.options().n_layers; ++l) {
    Status status = runtime.layer_stats(l, &(*out)[static_cast<std::size_t>(l)]);
    if (!status) return status;
  }
  return Status::ok();
}

std::string method_line(const hgca::Options& o) {
  return fmt::format("window {} blocks x {} tokens = {}, alpha {}, beta {}, min_keep {}, reeval_min_tokens {}, "
                     "heads_per_task {}", o.window_blocks, o.block_tokens, int64_t{o.window_blocks} * o.block_tokens,
                     o.alpha, o.beta, o.min_keep, o.reeval_min_tokens, o.heads_per_task);
}

void print_human(const Summary& s) {
  const hgca::Options& o = s.options;
  const double per_seq_layer = static_cast<double>(std::max<int64_t>(1, int64_t{s.batch} * o.n_layers));
  const Totals t = totals(s);
  const double kv_bytes_per_token_head = 2.0 * o.head_dim * static_cast<double>(hgca::dtype_size(o.dtype));
  const auto mib = [](double bytes) { return bytes / (1024.0 * 1024.0); };

  fmt::print("\nworkload   {}: {} layers, {} query heads, {} KV heads (GQA {}), head dim {}, {}, batch {}\n",
             s.workload, o.n_layers, o.n_q_heads, o.n_kv_heads, o.n_q_heads / o.n_kv_heads, o.head_dim,
             hgca::to_string(o.dtype), s.batch);
  fmt::print("prefill    {} tokens per sequence in {} step(s): {:.3f} s\n", s.prefill_tokens, s.prefill_steps,
             s.prefill_seconds);
  if (s.decode_seconds.empty()) {
    fmt::print("decode     no decode steps\n");
  } else {
    fmt::print("decode     {} steps: {:.1f} tokens/s, time between tokens p50 {:.3f} ms, p99 {:.3f} ms\n",
               s.decode_seconds.size(), decode_tokens_per_s(s).value_or(0.0), *percentile_ms(s.decode_seconds, 50),
               *percentile_ms(s.decode_seconds, 99));
  }
  if (s.backend == hgca::Backend::kCuda && !s.decode_seconds.empty()) {
    fmt::print("transfers  KV out of the window held the streams {:.3f} ms over the decode steps ({:.1f} % of their "
               "time)\n", 1e3 * s.decode_transfer_seconds, 100.0 * transfer_share(s));
  }
  fmt::print("window     {:.1f} of {:.0f} tokens per (layer, sequence)\n",
             static_cast<double>(t.window) / per_seq_layer, static_cast<double>(t.capacity) / per_seq_layer);
  fmt::print("store      {:.1f} tokens per (layer, sequence)\n", static_cast<double>(t.store) / per_seq_layer);
  fmt::print("context    {:.1f} entries per (layer, sequence, KV head); selected fraction {:.4f} (per layer: {:.4f})\n",
             static_cast<double>(t.context) / (per_seq_layer * o.n_kv_heads), mean_selected_fraction(s),
             fmt::join(s.layers | std::views::transform([](const hgca::LayerStats& l) { return l.selected_fraction; }),
                       " "));
  fmt::print("KV memory  window {:.2f} MiB, store {:.2f} MiB, context sets {:.2f} MiB\n",
             mib(static_cast<double>(t.window) * o.n_kv_heads * kv_bytes_per_token_head),
             mib(static_cast<double>(t.store) * o.n_kv_heads * kv_bytes_per_token_head),
             mib(static_cast<double>(t.context) * kv_bytes_per_token_head));
  if (s.backend == hgca::Backend::kCuda) {
    hgca::LayerStats sum;
    for (const auto& l : s.layers) {
      sum.overflow_calls += l.overflow_calls;
      sum.overflow_items += l.overflow_items;
      sum.overflow_bytes += l.overflow_bytes;
      sum.overflow_rows += l.overflow_rows;
      sum.overflow_predicted_cpu_seconds += l.overflow_predicted_cpu_seconds;
      sum.overflow_predicted_gpu_seconds += l.overflow_predicted_gpu_seconds;
    }
    fmt::print("overflow   policy {}: {} of {} layer calls attended context sets on the GPU ({} items, {:.2f} MiB, {} "
               "query rows); last step predicted CPU {:.3f} ms, GPU {:.3f} ms (summed over layers)\n",
               hgca::to_string(o.overflow), sum.overflow_calls,
               int64_t{o.n_layers} * (s.prefill_steps + static_cast<int64_t>(s.decode_seconds.size())),
               sum.overflow_items, mib(static_cast<double>(sum.overflow_bytes)), sum.overflow_rows,
               1e3 * sum.overflow_predicted_cpu_seconds, 1e3 * sum.overflow_predicted_gpu_seconds);
  }
  const hgca::StoreMemoryStats& m = s.store_memory;
  fmt::print("store mem  {} chunks{}, {:.2f} MiB held, {:.2f} MiB used; grown {} times by an allocation itself{}, "
             "{} ahead of need in the background\n",
             m.chunks, s.backend == hgca::Backend::kCuda ? fmt::format(" ({} registered)", m.registered_chunks) : "",
             mib(static_cast<double>(m.reserved_bytes)), mib(static_cast<double>(m.used_bytes)), m.sync_growths,
             s.decode_sync_growths ? fmt::format(" ({} during decode)", *s.decode_sync_growths) : "",
             m.background_growths);
  fmt::print("method     {}\n", method_line(o));
  fmt::print("backend    {}{}, threads {}, CPU path {}, store writes {}{}\n", hgca::to_string(s.backend),
             s.backend == hgca::Backend::kCuda ? fmt::format(" (handoff {})", hgca::to_string(s.handoff)) : "",
             o.threads > 0 && o.threads != s.threads_used ? fmt::format("{} (asked {})", s.threads_used, o.threads)
                                                         : fmt::to_string(s.threads_used),
             hgca::to_string(s.cpu.isa),
             hgca::to_string(o.store_writes),
             o.deterministic ? ", deterministic" : "");
  if (s.fidelity) {
    const auto& f = *s.fidelity;
    fmt::print("fidelity   vs exact attention over {} generated positions: top-1 agreement {:.4f}, mean KL {:.4g} "
               "nats, perplexity exact {:.4f} / hybrid {:.4f}\n",
               f.positions, f.top1_agreement, f.kl_mean, f.ppl_exact, f.ppl_hybrid);
  }
}

// A float's shortest decimal form as a double, so that --alpha 0.1 is 0.1 in the JSON, not 0.10000000149.
double shortest_decimal(float x) { return std::stod(fmt::format("{}", x)); }

void print_json(const Summary& s) {
  using nlohmann::json;
  const hgca::Options& o = s.options;
  const Totals t = totals(s);
  const auto or_null = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["workload"] = s.workload;
  j["text"] = s.text;
  j["tokens"] = s.tokens;
  j["tokens_per_s"] = or_null(decode_tokens_per_s(s));
  j["tbt_ms_p50"] = or_null(percentile_ms(s.decode_seconds, 50));
  j["tbt_ms_p99"] = or_null(percentile_ms(s.decode_seconds, 99));
  j["decode_steps"] = s.decode_seconds.size();
  json tbt = json::array();
  for (double sec : s.decode_seconds) tbt.push_back(1e3 * sec);
  j["tbt_ms"] = std::move(tbt);
  if (!s.decode_enqueue_seconds.empty()) {
    json enqueue = json::array();
    for (double sec : s.decode_enqueue_seconds) enqueue.push_back(1e3 * sec);
    j["enqueue_ms"] = std::move(enqueue);
  }
  j["decode_transfer_ms"] = 1e3 * s.decode_transfer_seconds;
  j["transfer_share"] = transfer_share(s);
  j["batch"] = s.batch;
  j["prefill_tokens"] = s.prefill_tokens;
  j["prefill_steps"] = s.prefill_steps;
  j["prefill_s"] = s.prefill_seconds;
  j["selected_fraction"] = mean_selected_fraction(s);
  j["window_tokens"] = t.window;
  j["window_capacity"] = t.capacity;
  j["store_tokens"] = t.store;
  j["context_tokens"] = t.context;
  json layers = json::array();
  for (const auto& l : s.layers) {
    layers.push_back({{"transfer_ms", 1e3 * l.transfer_seconds},
                      {"window_tokens", l.window_tokens},
                      {"store_tokens", l.store_tokens},
                      {"context_tokens", l.context_tokens},
                      {"selected_fraction", l.selected_fraction},
                      {"reevaluations", l.reevaluations},
                      {"overflow_calls", l.overflow_calls},
                      {"overflow_items", l.overflow_items},
                      {"overflow_bytes", l.overflow_bytes},
                      {"overflow_rows", l.overflow_rows},
                      {"overflow_predicted_cpu_ms", 1e3 * l.overflow_predicted_cpu_seconds},
                      {"overflow_predicted_gpu_ms", 1e3 * l.overflow_predicted_gpu_seconds}});
  }
  j["layers"] = std::move(layers);
  const hgca::StoreMemoryStats& m = s.store_memory;
  j["store_memory"] = {{"chunks", m.chunks},
                       {"registered_chunks", m.registered_chunks},
                       {"reserved_bytes", m.reserved_bytes},
                       {"used_bytes", m.used_bytes},
                       {"sync_growths", m.sync_growths},
                       {"background_growths", m.background_growths},
                       {"released_chunks", m.released_chunks}};
  if (s.decode_sync_growths) j["decode_sync_growths"] = *s.decode_sync_growths;
  j["n_layers"] = o.n_layers;
  j["n_q_heads"] = o.n_q_heads;
  j["n_kv_heads"] = o.n_kv_heads;
  j["head_dim"] = o.head_dim;
  j["dtype"] = hgca::to_string(o.dtype);
  j["backend"] = hgca::to_string(s.backend);
  j["threads"] = o.threads;
  j["threads_used"] = s.threads_used;
  json threads_per_node = json::array();
  for (const auto& node : s.cpu.nodes) threads_per_node.push_back(node.threads);
  j["cpu"] = {{"isa", hgca::to_string(s.cpu.isa)},
              {"kv_split_tokens", s.cpu.kv_split_tokens},
              {"max_packed_heads", s.cpu.max_packed_heads},
              {"numa_placement", hgca::to_string(o.numa_placement)},
              {"numa_bound", s.cpu.numa_bound},
              {"threads_per_node", std::move(threads_per_node)}};
  const char* config = std::getenv("HGCA_CONFIG");
  j["config"] = config && *config ? json(config) : json(nullptr);
  j["config_flag"] = s.config_path.empty() ? json(nullptr) : json(s.config_path);
  j["cuda_wait"] = s.cuda_wait;
  j["alpha"] = shortest_decimal(o.alpha);
  j["beta"] = shortest_decimal(o.beta);
  j["window_blocks"] = o.window_blocks;
  j["block_tokens"] = o.block_tokens;
  j["min_keep"] = o.min_keep;
  j["reeval_min_tokens"] = o.reeval_min_tokens;
  j["heads_per_task"] = o.heads_per_task;
  j["deterministic"] = o.deterministic;
  j["overflow"] = hgca::to_string(o.overflow);
  j["handoff"] = hgca::to_string(s.handoff);
  j["store_writes"] = hgca::to_string(o.store_writes);
  j["staging_limit_bytes"] = o.staging_limit_bytes;
  if (s.fidelity) {
    j["fidelity_positions"] = s.fidelity->positions;
    j["top1_agreement"] = s.fidelity->top1_agreement;
    j["kl_mean"] = s.fidelity->kl_mean;
    j["ppl_exact"] = s.fidelity->ppl_exact;
    j["ppl_hybrid"] = s.fidelity->ppl_hybrid;
  }
  // Raw-byte tokens can leave invalid UTF-8 in the text; replace it rather than fail the dump.
  fmt::print("{}\n", j.dump(-1, ' ', false, json::error_handler_t::replace));
}

int fail(const Status& status) {
  hgca::tools::eprint("hgca-decode: error ({}): {}\n", hgca::to_string(status.code()), status.message());
  return 1;
}

/// Where HGCA_CONFIG changed what the command line asked (the runtime applies the file over the
/// options it is given), a note, so that no flag is overridden in silence.
void note_config_overrides(const hgca::Options& asked, const hgca::Options& used) {
  const char* path = std::getenv("HGCA_CONFIG");
  if (!path || !*path) return;
  std::vector<std::string> changed;
  const auto compare = [&](std::string_view field, const auto& a, const auto& b) {
    if (a != b) changed.push_back(fmt::format("{} {} -> {}", field, a, b));
  };
  compare("threads", asked.threads, used.threads);
  compare("threads_per_node", asked.threads_per_node, used.threads_per_node);
  compare("kv_split_tokens", asked.kv_split_tokens, used.kv_split_tokens);
  compare("max_packed_heads", asked.max_packed_heads, used.max_packed_heads);
  compare("isa", hgca::to_string(asked.isa), hgca::to_string(used.isa));
  compare("numa_placement", hgca::to_string(asked.numa_placement), hgca::to_string(used.numa_placement));
  compare("overflow", hgca::to_string(asked.overflow), hgca::to_string(used.overflow));
  compare("overflow_margin", asked.overflow_margin, used.overflow_margin);
  compare("overflow_cpu_gbps", asked.overflow_cpu_gbps, used.overflow_cpu_gbps);
  compare("overflow_cpu_row_gbps", asked.overflow_cpu_row_gbps, used.overflow_cpu_row_gbps);
  compare("overflow_h2d_gbps", asked.overflow_h2d_gbps, used.overflow_h2d_gbps);
  compare("overflow_gpu_gbps", asked.overflow_gpu_gbps, used.overflow_gpu_gbps);
  compare("overflow_gpu_row_gbps", asked.overflow_gpu_row_gbps, used.overflow_gpu_row_gbps);
  compare("overflow_window_gbps", asked.overflow_window_gbps, used.overflow_window_gbps);
  if (changed.empty()) return;
  hgca::tools::eprint("hgca-decode: note: HGCA_CONFIG={} applies over the command line: {}\n", path,
                      fmt::join(changed, ", "));
}

/// fail() for the runtime refusing its options: a message about an Options field ("create:
/// window_blocks = 0, …") also names the flag that set it (or, for the model's shape, its
/// checkpoint).
int fail_options(const Status& status, bool synthetic) {
  static constexpr std::pair<std::string_view, std::string_view> kShape[] = {
      {"n_layers", "--layers"}, {"n_q_heads", "--q-heads"}, {"n_kv_heads", "--kv-heads"}};  // --head-dim: its parser
  static constexpr std::pair<std::string_view, std::string_view> kMethod[] = {
      {"window_blocks × block_tokens", "--window-blocks and --block-tokens"}, {"window_blocks", "--window-blocks"},
      {"block_tokens", "--block-tokens"}, {"alpha", "--alpha"},
      {"beta", "--beta"}, {"min_keep", "--min-keep"}, {"reeval_min_tokens", "--reeval-min-tokens"},
      {"heads_per_task", "--heads-per-task"}, {"threads", "--threads"}, {"staging_limit_bytes", "--staging-mib"}};
  const std::string_view message = status.message();
  std::string_view about = message;
  if (about.starts_with("create: ")) about.remove_prefix(std::string_view("create: ").size());
  const auto set_by = [&](std::span<const std::pair<std::string_view, std::string_view>> fields) -> std::string_view {
    for (const auto& [field, flag] : fields) {
      if (about.starts_with(field) && about.substr(field.size()).starts_with(" =")) return flag;
    }
    return {};
  };
  // The model's shape is its checkpoint's (head_dim = dim / n_heads): say so, not a flag.
  static constexpr std::pair<std::string_view, std::string_view> kCheckpoint[] = {
      {"n_layers", "the checkpoint's n_layers"}, {"n_q_heads", "the checkpoint's n_heads"},
      {"n_kv_heads", "the checkpoint's n_kv_heads"}, {"head_dim", "the checkpoint's dim / n_heads"}};
  std::string_view flag = set_by(kMethod);
  if (flag.empty()) flag = synthetic ? set_by(kShape) : set_by(kCheckpoint);
  if (flag.empty()) return fail(status);
  hgca::tools::eprint("hgca-decode: error ({}): {} (set by {})\n", hgca::to_string(status.code()), message, flag);
  return 1;
}

bool progress_enabled(const Cli& cli) { return !cli.json || isatty(fileno(stderr)) != 0; }

int run_model(const Cli& cli) {
  using namespace hgca::model;
  std::unique_ptr<Checkpoint> checkpoint;
  Status status = Checkpoint::load(cli.model_path, &checkpoint);
  if (!status) return fail(status);
  const Config& c = checkpoint->config();
  std::unique_ptr<Tokenizer> tokenizer;
  status = Tokenizer::load(cli.tokenizer_path, c.vocab_size, &tokenizer);
  if (!status) return fail(status);

  hgca::Options o = cli.options;
  o.n_layers = c.n_layers;
  o.n_q_heads = c.n_heads;
  o.n_kv_heads = c.n_kv_heads;
  o.head_dim = c.head_size();
  o.dtype = hgca::tools::dtype_named(cli.dtype.empty() ? "f32" : cli.dtype);
  std::unique_ptr<HgcaAttention> attention;
  status = HgcaAttention::create(o, &attention);
  if (!status) return fail_options(status, /*synthetic=*/false);
  note_config_overrides(o, attention->runtime().options());
  Model model(*checkpoint);

  GenerateOptions gen;
  gen.steps = cli.steps == 0 || cli.steps > c.seq_len ? c.seq_len : cli.steps;  // run.c's rule
  gen.keep_logits = cli.compare_exact;
  hgca::tools::ProgressBar bar("decoding", gen.steps, progress_enabled(cli));
  gen.on_step = [&bar](int32_t positions) { bar.update(positions); };
  constexpr hgca::SeqId kSeq = 0;
  status = attention->add_sequence(kSeq);
  if (!status) return fail(status);
  Generation g;
  status = generate_greedy(model, *tokenizer, *attention, kSeq, cli.prompt, gen, &g);
  if (!status) {
    bar.finish();  // says where it stopped, before the error
    return fail(status);
  }
  bar.complete();
  if (std::cmp_less(gen.steps, g.prompt_tokens.size())) {
    hgca::tools::eprint("hgca-decode: warning: --steps {} runs {} positions, fewer than the prompt's {} tokens (BOS "
                        "included): the prompt was cut and nothing was generated\n",
                        cli.steps, gen.steps, g.prompt_tokens.size());
  }

  Summary s;
  s.cuda_wait = cli.cuda_wait;
  s.config_path = cli.config_path;
  s.workload = "model " + cli.model_path;
  // Re-evaluations still in flight are published first, so the statistics describe the end state.
  status = attention->runtime().synchronize();
  if (status) status = collect_layer_stats(attention->runtime(), &s.layers);
  if (status) status = hgca::decode::store_memory_total(attention->runtime(), &s.store_memory);
  if (status) status = attention->release_sequence(kSeq);
  if (!status) return fail(status);
  s.options = attention->runtime().options();
  s.backend = attention->runtime().backend();
  s.handoff = attention->runtime().handoff();
  record_cpu(attention->runtime(), s);
  s.prefill_tokens = static_cast<int64_t>(g.fed.size() - g.decode_seconds.size());
  s.prefill_steps = 1;
  s.prefill_seconds = g.prefill_seconds;
  s.decode_seconds = g.decode_seconds;
  s.text = g.text;
  s.tokens = g.tokens;
  if (cli.compare_exact) {
    Fidelity f;
    status = compare_with_exact(model, g, &f);
    if (!status) return fail(status);
    s.fidelity = f;
  }
  if (cli.json) {
    print_json(s);
  } else {
    fmt::print("{}\n", s.text);
    print_human(s);
  }
  return 0;
}

/// The synthetic run's memory, estimated from the flags, against what the process may use: sizes that cannot
/// fit are refused up front, naming the flags, rather than failing or swapping part-way through.
Status check_synthetic_fits(const Cli& cli, const hgca::Options& o) {
  const hgca::decode::SyntheticWorkload& w = cli.synthetic;
  const double gib = hgca::tools::kGiB, ram = hgca::tools::usable_memory_gib();
  const auto elem = static_cast<double>(hgca::dtype_size(o.dtype));
  // A prefill step's q, k, v per layer in the dtype, made in fp32 one layer at a time, and out.
  const double tokens = static_cast<double>(std::min(w.chunk, w.context)) * w.batch;
  const double heads = o.n_q_heads + 2.0 * o.n_kv_heads;
  const double inputs = tokens * o.head_dim * (heads * (elem * o.n_layers + 4.0) + o.n_q_heads * elem) / gib;
  if (inputs > ram) {
    return {hgca::StatusCode::kInvalidArgument,
            fmt::format("a prefill step's inputs (--chunk {} x --batch {} tokens, --q-heads {} and 2 x --kv-heads {} "
                        "of --head-dim {} in --layers {}) take {:.1f} GiB, more than the {:.1f} GiB of memory this "
                        "process may use (the machine's, or its cgroup's limit); lower them",
                        std::min(w.chunk, w.context), w.batch, o.n_q_heads, o.n_kv_heads, o.head_dim, o.n_layers,
                        inputs, ram)};
  }
  // Every position's K and V in every layer (the store is in host memory), and every layer's window
  // (held whole from the start; the CUDA backend keeps a host copy of it).
  const int64_t window = static_cast<int64_t>(o.window_blocks) * o.block_tokens;
  const double kv = static_cast<double>(w.batch) * static_cast<double>(w.positions() + window) * o.n_kv_heads *
                    o.head_dim * 2.0 * elem * o.n_layers / gib;
  if (kv > ram) {
    return {hgca::StatusCode::kInvalidArgument,
            fmt::format("--context {} + --decode-steps {} positions and a window of --window-blocks {} x --block-tokens {} "
                        "tokens, for --batch {} sequences of --kv-heads {} x --head-dim {} in --layers {}: their KV takes "
                        "{:.1f} GiB, more than the {:.1f} GiB of memory this process may use (the machine's, or "
                        "its cgroup's limit; the store and the windows live there); lower them", w.context, w.decode_steps, o.window_blocks, o.block_tokens, w.batch,
                        o.n_kv_heads, o.head_dim, o.n_layers, kv, ram)};
  }
  return Status::ok();
}

int run_synthetic(const Cli& cli) {
  hgca::Options o = cli.options;
  o.n_layers = cli.layers;
  o.n_q_heads = cli.q_heads;
  o.n_kv_heads = cli.kv_heads;
  o.head_dim = cli.head_dim;
  o.dtype = hgca::tools::dtype_named(cli.dtype.empty() ? "bf16" : cli.dtype);
  if (!cli.window_blocks_given) o.window_blocks = 8;  // a 512-token window under a 2048-token prompt
  o.max_sequences = std::max(o.max_sequences, cli.synthetic.batch);
  // The runtime checks the options first (a --head-dim it cannot take is named as such, not as
  // memory), then the sizes are checked against the machine before anything is allocated for them.
  std::unique_ptr<hgca::Runtime> runtime;
  Status status = hgca::Runtime::create(o, &runtime);
  if (!status) return fail_options(status, /*synthetic=*/true);
  note_config_overrides(o, runtime->options());
  if (Status s = check_synthetic_fits(cli, runtime->options()); !s) return fail(s);

  hgca::tools::ProgressBar bar("positions", cli.synthetic.positions(), progress_enabled(cli));
  hgca::decode::SyntheticTimes times;
  status = hgca::decode::run_synthetic(*runtime, cli.synthetic, [&bar](int64_t done) { bar.update(done); }, &times);
  bar.finish();
  if (!status) return fail(status);

  Summary s;
  s.cuda_wait = cli.cuda_wait;
  s.config_path = cli.config_path;
  s.workload = "synthetic";
  status = runtime->synchronize();
  if (status) status = collect_layer_stats(*runtime, &s.layers);
  if (status) status = hgca::decode::store_memory_total(*runtime, &s.store_memory);
  for (int32_t i = 0; i < cli.synthetic.batch && status; ++i) {
    status = runtime->release_sequence(static_cast<hgca::SeqId>(i));
  }
  if (!status) return fail(status);
  s.options = runtime->options();
  s.backend = runtime->backend();
  s.handoff = runtime->handoff();
  record_cpu(*runtime, s);
  s.batch = cli.synthetic.batch;
  s.prefill_tokens = cli.synthetic.context;
  s.prefill_steps = times.prefill_steps;
  s.prefill_seconds = times.prefill_seconds;
  s.decode_seconds = times.decode_seconds;
  s.decode_enqueue_seconds = times.decode_enqueue_seconds;
  s.decode_transfer_seconds = times.decode_transfer_seconds;
  s.decode_sync_growths = times.decode_sync_growths;
  if (cli.json) {
    print_json(s);
  } else {
    print_human(s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Cli cli;
  CLI::App app{kDescription, "hgca-decode"};
  app.footer(kExamples);
  hgca::tools::add_version_flag(app);
  app.get_formatter()->column_width(34);

  const auto positive = hgca::tools::integer_in<int32_t>(1, std::numeric_limits<int32_t>::max());
  const auto non_negative = hgca::tools::integer_in<int32_t>(0, std::numeric_limits<int32_t>::max());
  const auto int32 = hgca::tools::integer<int32_t>();  // where the runtime names what the value must be
  const std::string model_group = "Model (llama2.c checkpoint)";
  auto* model = app.add_option("--model", cli.model_path, "llama2.c float32 checkpoint; without it the synthetic "
                               "workload runs")->check(CLI::ExistingFile)->group(model_group);
  auto* tokenizer = app.add_option("--tokenizer", cli.tokenizer_path, "its tokenizer (llama2.c tokenizer.bin format)")
                        ->check(CLI::ExistingFile)->group(model_group);
  auto* prompt = app.add_option("--prompt", cli.prompt, "prompt text (default: empty, BOS only)")->group(model_group);
  auto* steps = app.add_option("--steps", cli.steps, "positions to run, prompt included; 0 or more than the model's "
                               "seq_len means seq_len")->capture_default_str()->transform(non_negative)
                    ->group(model_group);
  auto* compare = app.add_flag("--compare-exact", cli.compare_exact, "also run exact attention teacher-forced on the "
                               "generated tokens and report top-1 agreement, mean KL(exact || hybrid) and both "
                               "perplexities")->group(model_group);
  model->needs(tokenizer);
  for (auto* opt : {tokenizer, prompt, steps, compare}) opt->needs(model);

  const std::string method_group = "Method (HGCA; defaults are hgca::Options')";
  hgca::Options& o = cli.options;
  app.add_option("--alpha", o.alpha, "MAW update rate: maw <- (1 - alpha) maw + alpha a")->capture_default_str()
      ->transform(hgca::tools::number<float>())->group(method_group);
  app.add_option("--beta", o.beta, "selection threshold: a store entry joins the context set when maw > beta / "
                 "n_ref; 0 keeps everything (exact)")->capture_default_str()->transform(hgca::tools::number<float>())
      ->group(method_group);
  auto* window_blocks = app.add_option("--window-blocks", o.window_blocks, "window length in blocks (the synthetic "
                                       "workload defaults to 8)")->capture_default_str()->transform(int32)->group(method_group);
  app.add_option("--block-tokens", o.block_tokens, "tokens per block, the eviction granularity")
      ->capture_default_str()->transform(int32)->group(method_group);
  app.add_option("--min-keep", o.min_keep, "store entries kept per KV head even when none passes the threshold")
      ->capture_default_str()->transform(int32)->group(method_group);
  app.add_option("--reeval-min-tokens", o.reeval_min_tokens, "an append of at least this many tokens re-selects "
                 "the store")->capture_default_str()->transform(int32)->group(method_group);
  app.add_option("--heads-per-task", o.heads_per_task, "HGCA 3.3's merged heads: each run of this many adjacent KV "
                 "heads has its context sets padded to equal length (1: no padding)")
      ->capture_default_str()->transform(int32)->group(method_group);

  const std::string exec_group = "Execution";
  app.add_option("--dtype", cli.dtype, "element type of q, k, v and the KV cache (default: f32 with --model, bf16 "
                 "for the synthetic workload; fp32 and fp16 name f32 and f16 too, as in hgca-tune)")
      ->check(CLI::IsMember(hgca::tools::kDtypeNames))->group(exec_group);
  app.add_option("--backend", cli.backend, "where the window lives and is attended: cuda (the GPU; "
                 "device memory, asynchronous), host (all on the CPU), auto (cuda when this build has CUDA and "
                 "a GPU is usable, else host)")->capture_default_str()
      ->check(CLI::IsMember({"auto", "host", "cuda"}))->group(exec_group);
  auto* threads = app.add_option("--threads", o.threads, "CPU worker threads, 0 = all cores")->capture_default_str()->transform(non_negative)
      ->group(exec_group);
  app.add_option("--cuda-wait", cli.cuda_wait, "how this process's threads wait for the GPU (CUDA's device schedule "
                 "flag): auto (CUDA's choice: spin while cores outnumber contexts), spin, yield, blocking (sleep "
                 "until the GPU signals: frees the waiting thread's core for the CPU pool)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "spin", "yield", "blocking"}))->group(exec_group);
  auto* overflow = app.add_option("--overflow", cli.overflow, "the CUDA backend's overflow policy: auto (a cost model moves context "
                 "sets to the GPU when that shortens the call), off (the CPU attends them all), always (every "
                 "non-empty one moves)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "off", "always"}))->group(exec_group);
  app.add_option("--handoff", cli.handoff, "how the CUDA backend's streams hand each call's plan and CPU part to the "
                 "host: auto (poll where the driver allows), poll (a thread of the runtime watches flags that the "
                 "streams write: a few µs, one core busy while steps run), callback (CUDA host functions: tens of µs)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "poll", "callback"}))->group(exec_group);
  app.add_option("--store-writes", cli.store_writes, "how bulk rows enter the DRAM store's blocks: streamed "
                 "(non-temporal stores: faster eviction, the rows leave the caches), cached, auto (streamed once "
                 "the store memory in use exceeds the last-level cache)")
      ->capture_default_str()->check(CLI::IsMember({"auto", "cached", "streamed"}))->group(exec_group);
  auto* staging_mib = app.add_option("--staging-mib", cli.staging_mib, "the CUDA backend's pinned staging of new K/V rows (FlashD2H), "
                 "in MiB: the layers' calls share as many slots as this holds at the largest call (at least 4, at "
                 "most 2 per layer (a 1-layer model: 2), never exactly 1 per layer); staging beyond the CPU's last-level cache slows the scatter")
      ->capture_default_str()->transform(positive)->group(exec_group);
  app.add_flag("--deterministic", o.deterministic, "re-evaluations publish before the next call (reproducible runs)")
      ->group(exec_group);
  app.add_flag("--json", cli.json, "print the summary as one JSON object on stdout")->group(exec_group);
  app.add_option("--config", cli.config_path, "hgca-tune's configuration (its --out): its tuned fields apply, but for "
                 "those a flag sets (--threads, --overflow); HGCA_CONFIG applies over both")
      ->check(hgca::tools::file_path())->group(exec_group);

  const std::string synth_group = "Synthetic workload (without --model)";
  hgca::decode::SyntheticWorkload& w = cli.synthetic;
  std::vector<CLI::Option*> synthetic_opts = {
      app.add_option("--layers", cli.layers, "attention layers")->capture_default_str()->transform(positive),
      app.add_option("--q-heads", cli.q_heads, "query heads")->capture_default_str()->transform(positive),
      app.add_option("--kv-heads", cli.kv_heads, "KV heads")->capture_default_str()->transform(positive),
      app.add_option("--head-dim", cli.head_dim, "head dim")->capture_default_str()->transform(hgca::tools::head_dim()),
      app.add_option("--batch", w.batch, "sequences per step")->capture_default_str()->transform(positive),
      app.add_option("--context", w.context, "prompt tokens per sequence")->capture_default_str()
          ->transform(positive),
      app.add_option("--chunk", w.chunk, "tokens per prefill (append) step")->capture_default_str()
          ->transform(positive),
      app.add_option("--decode-steps", w.decode_steps, "decode steps after the prefill")->capture_default_str()
          ->transform(non_negative),
      app.add_option("--seed", w.seed, "seed of the synthetic q, k, v")->capture_default_str()->transform(hgca::tools::integer<uint64_t>()),
  };
  for (auto* opt : synthetic_opts) opt->group(synth_group);

  if (const auto status = hgca::tools::parse(app, argc, argv)) return *status;
  // Checked here rather than with CLI11's excludes(), which would list every option in --help.
  for (auto* opt : synthetic_opts) {
    if (opt->count() > 0 && model->count() > 0) return hgca::tools::usage_error(app, CLI::ExcludesError(opt->get_name(), "--model").what());
  }
  cli.options.backend = parse_choice(cli.backend, {hgca::Backend::kAuto, hgca::Backend::kHost, hgca::Backend::kCuda});
  cli.options.overflow =
      parse_choice(cli.overflow, {hgca::OverflowMode::kAuto, hgca::OverflowMode::kOff, hgca::OverflowMode::kAlways});
  cli.options.handoff =
      parse_choice(cli.handoff, {hgca::HostHandoff::kAuto, hgca::HostHandoff::kPoll, hgca::HostHandoff::kCallback});
  cli.options.store_writes = parse_choice(
      cli.store_writes, {hgca::StoreWrites::kAuto, hgca::StoreWrites::kCached, hgca::StoreWrites::kStreamed});
  cli.options.staging_limit_bytes = int64_t{cli.staging_mib} << 20;
  if (!cli.config_path.empty()) {  // the file's tuned fields, under the flags given
    hgca::Options tuned = cli.options;
    if (const Status st = hgca::load_options_json(cli.config_path, &tuned); !st) return fail(st);
    if (threads->count() > 0) tuned.threads = cli.options.threads;
    if (overflow->count() > 0) tuned.overflow = cli.options.overflow;
    cli.options = tuned;
  }
  cli.window_blocks_given = window_blocks->count() > 0;
  // The CUDA backend's own settings: refused with --backend host, and named where --backend auto
  // finds no usable GPU and runs on the host, where they have nothing to set (not dropped in silence).
  const std::pair<std::string, bool> cuda_only[] = {
      {"--cuda-wait " + cli.cuda_wait, cli.cuda_wait != "auto"},
      {"--handoff " + cli.handoff, cli.handoff != "auto"},
      {"--overflow " + cli.overflow, cli.overflow != "auto"},
      {fmt::format("--staging-mib {}", cli.staging_mib), staging_mib->count() > 0}};
  std::vector<std::string> cuda_flags;
  for (const auto& [flag, given] : cuda_only) {
    if (given) cuda_flags.push_back(flag);
  }
  const bool on_host = cli.options.backend == hgca::Backend::kHost ||
                       (cli.options.backend == hgca::Backend::kAuto && hgca::cuda_device_count() == 0);
  if (!cuda_flags.empty() && cli.options.backend == hgca::Backend::kHost) {
    return hgca::tools::usage_error(app, fmt::format("{} needs the CUDA backend, got --backend host", cuda_flags.front()));
  }
  if (!cuda_flags.empty() && on_host) {
    hgca::tools::eprint("hgca-decode: note: no usable GPU, so --backend auto runs on the host, where {} {} no effect\n",
                        fmt::join(cuda_flags, ", "), cuda_flags.size() == 1 ? "has" : "have");
  }
  // Before the runtime creates the device's context; without a device, the runtime says so first.
  if (cli.cuda_wait != "auto" && !on_host && hgca::cuda_device_count() > 0) {
    const auto wait = cli.cuda_wait == "spin"    ? hgca::devmem::HostWait::kSpin
                      : cli.cuda_wait == "yield" ? hgca::devmem::HostWait::kYield
                                                 : hgca::devmem::HostWait::kBlocking;
    if (const Status st = hgca::devmem::set_host_wait(wait); !st) {
      hgca::tools::eprint("hgca-decode: error: --cuda-wait {}: {}\n", cli.cuda_wait, st.message());
      return 1;
    }
  }
  try {
    // Output that did not reach its file (a full disk, a closed pipe) fails the run.
    return hgca::tools::finish_stdout("hgca-decode", cli.model_path.empty() ? run_synthetic(cli) : run_model(cli));
  } catch (const std::exception& e) {  // allocation failures and the like, from the tool's own code
    hgca::tools::eprint("hgca-decode: error: {}\n", e.what());
    return 1;
  }
}
