// The C ABI: hgca.h's functions forwarding to the C++ Runtime, with a per-thread last error.
#include "hgca/hgca.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hgca/hgca.hpp"

struct hgca_runtime {
  std::unique_ptr<hgca::Runtime> impl;
};

namespace {

thread_local std::string last_error;

/// The status of a C++ call's result; a failure's message becomes the thread's last error, named as
/// the C caller knows the call: the C++ message's leading "read_kv: " reads "hgca_read_kv: ", and
/// one that names no call (create's option checks) gets the C function's name in front.
hgca_status report(const char* function, const hgca::Status& s) {
  if (!s.is_ok()) {
    std::string_view message = s.message();
    std::string_view call = function;
    call.remove_prefix(std::strlen("hgca_"));
    if (call.starts_with("get_")) call.remove_prefix(std::strlen("get_"));  // hgca_get_layer_stats: layer_stats
    if (message.starts_with(call) && message.substr(call.size()).starts_with(": ")) message.remove_prefix(call.size() + 2);
    last_error = fmt::format("{}: {}", function, message);
  }
  return static_cast<hgca_status>(s.code());
}

/// Sets the thread's last error and returns `code`. No exception leaves the C ABI (a C caller
/// cannot catch it): without memory for the message, the message is empty.
template <typename... Args>
hgca_status fail_with(hgca_status code, fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    last_error = fmt::format(format, std::forward<Args>(args)...);
  } catch (...) {
    last_error.clear();
  }
  return code;
}

/// The status of the exception being handled: host memory exhaustion is HGCA_OUT_OF_MEMORY,
/// anything else HGCA_INTERNAL.
hgca_status exception_status(const char* function) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail_with(HGCA_OUT_OF_MEMORY, "{}: host memory exhausted", function);
  } catch (const std::exception& e) {
    return fail_with(HGCA_INTERNAL, "{}: {}", function, e.what());
  } catch (...) {
    return fail_with(HGCA_INTERNAL, "{}: an unknown exception", function);
  }
}

/// Runs an entry's body; an exception it throws becomes its status (exception_status).
template <typename F>
hgca_status guarded(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return exception_status(function);
  }
}

/// Runs the C++ call behind C entry `function` (a lambda returning its Status): report() with guarded().
template <typename F>
hgca_status forward(const char* function, F&& call) noexcept {
  return guarded(function, [&] { return report(function, call()); });
}

hgca_status null_argument(const char* function, const char* argument) noexcept {
  return fail_with(HGCA_INVALID_ARGUMENT, "{}: {} is null", function, argument);
}

/// The int a C enum field (or argument) holds. C may store any int there; read as the enum type in
/// C++ a value outside its enumerators' range is undefined behaviour, so its bytes are copied.
template <typename E>
int32_t raw(const E& c_enum) noexcept {
  static_assert(sizeof(E) == sizeof(int32_t), "hgca.h's enums are int-sized (no -fshort-enums)");
  int32_t v;
  std::memcpy(&v, &c_enum, sizeof v);
  return v;
}

hgca::Options to_cpp(const hgca_options& o) {
  hgca::Options r;
  r.n_layers = o.n_layers;
  r.n_q_heads = o.n_q_heads;
  r.n_kv_heads = o.n_kv_heads;
  r.head_dim = o.head_dim;
  r.dtype = static_cast<hgca::DType>(raw(o.dtype));
  r.sm_scale = o.sm_scale;
  r.window_blocks = o.window_blocks;
  r.block_tokens = o.block_tokens;
  r.alpha = o.alpha;
  r.beta = o.beta;
  r.min_keep = o.min_keep;
  r.reeval_min_tokens = o.reeval_min_tokens;
  r.heads_per_task = o.heads_per_task;
  r.backend = static_cast<hgca::Backend>(raw(o.backend));
  r.max_sequences = o.max_sequences;
  r.threads = o.threads;
  r.deterministic = o.deterministic != 0;
  r.threads_per_node = o.threads_per_node;
  r.kv_split_tokens = o.kv_split_tokens;
  r.max_packed_heads = o.max_packed_heads;
  r.isa = static_cast<hgca::CpuIsa>(raw(o.isa));
  r.numa_placement = static_cast<hgca::NumaPlacement>(raw(o.numa_placement));
  r.store_chunk_bytes = o.store_chunk_bytes;
  r.store_limit_bytes = o.store_limit_bytes;
  r.overflow = static_cast<hgca::OverflowMode>(raw(o.overflow));
  r.overflow_margin = o.overflow_margin;
  r.overflow_cpu_gbps = o.overflow_cpu_gbps;
  r.overflow_cpu_row_gbps = o.overflow_cpu_row_gbps;
  r.overflow_h2d_gbps = o.overflow_h2d_gbps;
  r.overflow_gpu_gbps = o.overflow_gpu_gbps;
  r.overflow_gpu_row_gbps = o.overflow_gpu_row_gbps;
  r.overflow_window_gbps = o.overflow_window_gbps;
  r.handoff = static_cast<hgca::HostHandoff>(raw(o.handoff));
  r.store_writes = static_cast<hgca::StoreWrites>(raw(o.store_writes));
  r.staging_limit_bytes = o.staging_limit_bytes;
  return r;
}

hgca_options to_c(const hgca::Options& d) {
  return hgca_options{d.n_layers, d.n_q_heads, d.n_kv_heads, d.head_dim,
                      static_cast<hgca_dtype>(d.dtype), d.sm_scale, d.window_blocks,
                      d.block_tokens, d.alpha, d.beta, d.min_keep, d.reeval_min_tokens,
                      d.heads_per_task, static_cast<hgca_backend>(d.backend), d.max_sequences, d.threads,
                      d.deterministic ? 1 : 0, d.threads_per_node, d.kv_split_tokens, d.max_packed_heads,
                      static_cast<hgca_isa>(d.isa), static_cast<hgca_numa_placement>(d.numa_placement),
                      d.store_chunk_bytes, d.store_limit_bytes,
                      static_cast<hgca_overflow>(d.overflow), d.overflow_margin, d.overflow_cpu_gbps,
                      d.overflow_cpu_row_gbps, d.overflow_h2d_gbps, d.overflow_gpu_gbps, d.overflow_gpu_row_gbps,
                      d.overflow_window_gbps, static_cast<hgca_handoff>(d.handoff),
                      static_cast<hgca_store_writes>(d.store_writes), d.staging_limit_bytes};
}

// Writes back only the fields load_options_json may change, so the others keep their exact bits.
void tuned_to_c(const hgca::Options& r, hgca_options* o) {
  o->threads = r.threads;
  o->threads_per_node = r.threads_per_node;
  o->kv_split_tokens = r.kv_split_tokens;
  o->max_packed_heads = r.max_packed_heads;
  o->isa = static_cast<hgca_isa>(r.isa);
  o->numa_placement = static_cast<hgca_numa_placement>(r.numa_placement);
  o->overflow = static_cast<hgca_overflow>(r.overflow);
  o->overflow_margin = r.overflow_margin;
  o->overflow_cpu_gbps = r.overflow_cpu_gbps;
  o->overflow_cpu_row_gbps = r.overflow_cpu_row_gbps;
  o->overflow_h2d_gbps = r.overflow_h2d_gbps;
  o->overflow_gpu_gbps = r.overflow_gpu_gbps;
  o->overflow_gpu_row_gbps = r.overflow_gpu_row_gbps;
  o->overflow_window_gbps = r.overflow_window_gbps;
}

}  // namespace

extern "C" {

int32_t hgca_version(void) { return HGCA_VERSION; }

void hgca_options_default(hgca_options* options) {
  if (options) *options = to_c(hgca::Options{});
}

hgca_status hgca_load_options_json(const char* path, hgca_options* inout) {
  if (!path) return null_argument("hgca_load_options_json", "path");
  if (!inout) return null_argument("hgca_load_options_json", "inout");
  return guarded("hgca_load_options_json", [&]() -> hgca_status {
    hgca::Options o = to_cpp(*inout);
    if (hgca_status s = report("hgca_load_options_json", hgca::load_options_json(path, &o)); s != HGCA_OK) return s;
    tuned_to_c(o, inout);
    return HGCA_OK;
  });
}

const char* hgca_status_string(hgca_status status) {
  return hgca::to_string(static_cast<hgca::StatusCode>(raw(status)));
}

const char* hgca_last_error(void) { return last_error.c_str(); }

hgca_status hgca_create(const hgca_options* options, hgca_runtime** out) {
  if (!options) return null_argument("hgca_create", "options");
  if (!out) return null_argument("hgca_create", "out");
  if (options->deterministic != 0 && options->deterministic != 1) {
    return fail_with(HGCA_INVALID_ARGUMENT, "hgca_create: options->deterministic = {}, expected 0 or 1",
                     options->deterministic);
  }
  return guarded("hgca_create", [&]() -> hgca_status {
    auto rt = std::make_unique<hgca_runtime>();
    if (hgca_status s = report("hgca_create", hgca::Runtime::create(to_cpp(*options), &rt->impl)); s != HGCA_OK) {
      return s;
    }
    *out = rt.release();
    return HGCA_OK;
  });
}

void hgca_destroy(hgca_runtime* runtime) { delete runtime; }

hgca_status hgca_add_sequence(hgca_runtime* runtime, uint64_t seq_id) {
  if (!runtime) return null_argument("hgca_add_sequence", "runtime");
  return forward("hgca_add_sequence", [&] { return runtime->impl->add_sequence(seq_id); });
}

hgca_status hgca_release_sequence(hgca_runtime* runtime, uint64_t seq_id) {
  if (!runtime) return null_argument("hgca_release_sequence", "runtime");
  return forward("hgca_release_sequence", [&] { return runtime->impl->release_sequence(seq_id); });
}

hgca_status hgca_begin_step(hgca_runtime* runtime, const uint64_t* seq_ids, const int32_t* n_new,
                            int32_t batch_size) {
  if (!runtime) return null_argument("hgca_begin_step", "runtime");
  if (batch_size < 1) return fail_with(HGCA_INVALID_ARGUMENT, "hgca_begin_step: batch_size = {}, expected ≥ 1", batch_size);
  if (!seq_ids) return null_argument("hgca_begin_step", "seq_ids");
  if (!n_new) return null_argument("hgca_begin_step", "n_new");
  const auto n = static_cast<std::size_t>(batch_size);
  return forward("hgca_begin_step", [&] { return runtime->impl->begin_step(std::span(seq_ids, n), std::span(n_new, n)); });
}

hgca_status hgca_attention(hgca_runtime* runtime, int32_t layer, int64_t total_tokens,
                           const void* q, const void* k, const void* v, void* out, float* lse_out,
                           void* stream) {
  if (!runtime) return null_argument("hgca_attention", "runtime");
  const hgca::Options& o = runtime->impl->options();
  const hgca::TensorView tq{q, o.dtype, {total_tokens, o.n_q_heads, o.head_dim}};
  const hgca::TensorView tk{k, o.dtype, {total_tokens, o.n_kv_heads, o.head_dim}};
  const hgca::TensorView tv{v, o.dtype, {total_tokens, o.n_kv_heads, o.head_dim}};
  const hgca::MutableTensorView to{out, o.dtype, {total_tokens, o.n_q_heads, o.head_dim}};
  return forward("hgca_attention", [&] { return runtime->impl->attention(layer, tq, tk, tv, to, lse_out, stream); });
}

hgca_status hgca_end_step(hgca_runtime* runtime) {
  if (!runtime) return null_argument("hgca_end_step", "runtime");
  return forward("hgca_end_step", [&] { return runtime->impl->end_step(); });
}

hgca_status hgca_abort_step(hgca_runtime* runtime) {
  if (!runtime) return null_argument("hgca_abort_step", "runtime");
  return forward("hgca_abort_step", [&] { return runtime->impl->abort_step(); });
}

hgca_status hgca_get_layer_stats(const hgca_runtime* runtime, int32_t layer, hgca_layer_stats* out,
                             int64_t* context_tokens, int32_t context_tokens_capacity) {
  if (!runtime) return null_argument("hgca_get_layer_stats", "runtime");
  if (!out) return null_argument("hgca_get_layer_stats", "out");
  const int32_t hkv = runtime->impl->options().n_kv_heads;
  if (context_tokens && context_tokens_capacity < hkv) {
    return fail_with(HGCA_INVALID_ARGUMENT, "hgca_get_layer_stats: context_tokens_capacity = {}, expected ≥ n_kv_heads = {}",
                     context_tokens_capacity, hkv);
  }
  return guarded("hgca_get_layer_stats", [&]() -> hgca_status {
    hgca::LayerStats st;
    if (hgca_status s = report("hgca_get_layer_stats", runtime->impl->layer_stats(layer, &st)); s != HGCA_OK) return s;
    *out = hgca_layer_stats{st.sequences, st.window_tokens, st.window_capacity, st.store_tokens,
                            st.selected_fraction, st.reevaluations, st.transfer_seconds, st.overflow_calls,
                            st.overflow_items, st.overflow_bytes, st.overflow_rows,
                            st.overflow_predicted_cpu_seconds, st.overflow_predicted_gpu_seconds};
    if (context_tokens) std::copy(st.context_tokens.begin(), st.context_tokens.end(), context_tokens);
    return HGCA_OK;
  });
}

hgca_status hgca_get_store_memory_stats(const hgca_runtime* runtime, hgca_store_memory_stats* out,
                                        int32_t capacity, int32_t* count) {
  if (!runtime) return null_argument("hgca_get_store_memory_stats", "runtime");
  if (!count) return null_argument("hgca_get_store_memory_stats", "count");
  if (capacity < 0 || (capacity > 0 && !out)) {
    return fail_with(HGCA_INVALID_ARGUMENT, "hgca_get_store_memory_stats: capacity = {} with out = {}, expected "
                     "capacity ≥ 0 and out not null when capacity > 0", capacity, static_cast<const void*>(out));
  }
  return guarded("hgca_get_store_memory_stats", [&]() -> hgca_status {
    std::vector<hgca::StoreMemoryStats> st;
    if (hgca_status s = report("hgca_get_store_memory_stats", runtime->impl->store_memory_stats(&st)); s != HGCA_OK) return s;
    *count = static_cast<int32_t>(st.size());
    for (std::size_t i = 0; i < st.size() && i < static_cast<std::size_t>(capacity); ++i) {
      const hgca::StoreMemoryStats& n = st[i];
      out[i] = hgca_store_memory_stats{n.node, n.chunks, n.registered_chunks, n.bound_chunks, n.reserved_bytes,
                                       n.used_bytes, n.sync_growths, n.background_growths, n.released_chunks,
                                       n.registration_failures};
    }
    return HGCA_OK;
  });
}

hgca_status hgca_sequence_length(const hgca_runtime* runtime, uint64_t seq_id, int64_t* out) {
  if (!runtime) return null_argument("hgca_sequence_length", "runtime");
  return forward("hgca_sequence_length", [&] { return runtime->impl->sequence_length(seq_id, out); });
}

hgca_status hgca_get_cpu_stats(const hgca_runtime* runtime, hgca_cpu_stats* out, hgca_numa_node_stats* nodes,
                               int32_t nodes_capacity) {
  if (!runtime) return null_argument("hgca_get_cpu_stats", "runtime");
  if (!out) return null_argument("hgca_get_cpu_stats", "out");
  return guarded("hgca_get_cpu_stats", [&]() -> hgca_status {
    hgca::CpuStats st;
    if (hgca_status s = report("hgca_get_cpu_stats", runtime->impl->cpu_stats(&st)); s != HGCA_OK) return s;
    const auto n = static_cast<int32_t>(st.nodes.size());
    if (nodes && nodes_capacity < n) {
      return fail_with(HGCA_INVALID_ARGUMENT, "hgca_get_cpu_stats: nodes_capacity = {}, expected ≥ {} (the NUMA nodes)",
                       nodes_capacity, n);
    }
    *out = hgca_cpu_stats{static_cast<hgca_isa>(st.isa), st.kv_split_tokens, st.max_packed_heads,
                          st.numa_bound ? 1 : 0, n};
    for (int32_t i = 0; nodes && i < n; ++i) {
      const hgca::NumaNodeStats& node = st.nodes[static_cast<std::size_t>(i)];
      nodes[i] = hgca_numa_node_stats{node.threads, node.gpu_local ? 1 : 0, node.sequences};
    }
    return HGCA_OK;
  });
}

hgca_status hgca_sequence_node(const hgca_runtime* runtime, uint64_t seq_id, int32_t* out) {
  if (!runtime) return null_argument("hgca_sequence_node", "runtime");
  return forward("hgca_sequence_node", [&] { return runtime->impl->sequence_node(seq_id, out); });
}

hgca_status hgca_read_kv(const hgca_runtime* runtime, int32_t layer, uint64_t seq_id, void* k_out,
                         void* v_out) {
  if (!runtime) return null_argument("hgca_read_kv", "runtime");
  return forward("hgca_read_kv", [&] { return runtime->impl->read_kv(layer, seq_id, k_out, v_out); });
}

hgca_status hgca_synchronize(hgca_runtime* runtime) {
  if (!runtime) return null_argument("hgca_synchronize", "runtime");
  return forward("hgca_synchronize", [&] { return runtime->impl->synchronize(); });
}

hgca_status hgca_get_options(const hgca_runtime* runtime, hgca_options* out) {
  if (!runtime) return null_argument("hgca_get_options", "runtime");
  if (!out) return null_argument("hgca_get_options", "out");
  *out = to_c(runtime->impl->options());
  return HGCA_OK;
}

hgca_status hgca_get_backend(const hgca_runtime* runtime, hgca_backend* out) {
  if (!runtime) return null_argument("hgca_get_backend", "runtime");
  if (!out) return null_argument("hgca_get_backend", "out");
  *out = static_cast<hgca_backend>(runtime->impl->backend());
  return HGCA_OK;
}

hgca_status hgca_get_handoff(const hgca_runtime* runtime, hgca_handoff* out) {
  if (!runtime) return null_argument("hgca_get_handoff", "runtime");
  if (!out) return null_argument("hgca_get_handoff", "out");
  *out = static_cast<hgca_handoff>(runtime->impl->handoff());
  return HGCA_OK;
}

}  // extern "C"
