/* hgca C ABI: the C++ API (hgca.hpp) behind an opaque handle, for other languages and frameworks.
 *
 * Every function but hgca_version, hgca_options_default, hgca_destroy, hgca_status_string and
 * hgca_last_error returns an hgca_status; on failure hgca_last_error() gives a message naming the
 * function that failed ("hgca_read_kv: ..."), the argument, the value and what was expected: UTF-8,
 * per calling thread, never NULL ("" before the thread's first failure), kept until the thread's
 * next failing call (a call that succeeds leaves it as it was), the pointer valid until then.
 * Tensors are contiguous row-major in the runtime's dtype:
 *   q, out [total_tokens, n_q_heads, head_dim]; k, v [total_tokens, n_kv_heads, head_dim].
 */
#ifndef HGCA_HGCA_H_
#define HGCA_HGCA_H_

#include <stdint.h>

/* The version of this header; hgca_version() gives the library's (CMake's project version is read
 * from here). Until 1.0 a new minor version may change the ABI. */
#define HGCA_VERSION_MAJOR 0
#define HGCA_VERSION_MINOR 1
#define HGCA_VERSION_PATCH 0
#define HGCA_VERSION (HGCA_VERSION_MAJOR * 10000 + HGCA_VERSION_MINOR * 100 + HGCA_VERSION_PATCH)
#if HGCA_VERSION_MINOR > 99 || HGCA_VERSION_PATCH > 99
#error "HGCA_VERSION encodes the minor and patch versions in two decimal digits each"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgca_status {
  HGCA_OK = 0,
  HGCA_INVALID_ARGUMENT = 1,
  HGCA_NOT_FOUND = 2,
  HGCA_FAILED_PRECONDITION = 3,
  HGCA_OUT_OF_MEMORY = 4,
  HGCA_UNSUPPORTED = 5,
  HGCA_INTERNAL = 6
} hgca_status;

typedef enum hgca_dtype { HGCA_FLOAT32 = 0, HGCA_FLOAT16 = 1, HGCA_BFLOAT16 = 2 } hgca_dtype;
typedef enum hgca_backend { HGCA_BACKEND_AUTO = 0, HGCA_BACKEND_HOST = 1, HGCA_BACKEND_CUDA = 2 } hgca_backend;
typedef enum hgca_isa {
  HGCA_ISA_AUTO = 0,
  HGCA_ISA_PORTABLE = 1,
  HGCA_ISA_AVX2 = 2,
  HGCA_ISA_AVX512 = 3,
  HGCA_ISA_AVX512_BF16 = 4
} hgca_isa;
typedef enum hgca_numa_placement {
  HGCA_NUMA_PLACEMENT_AUTO = 0,
  HGCA_NUMA_PLACEMENT_BALANCED = 1,
  HGCA_NUMA_PLACEMENT_GPU_LOCAL = 2
} hgca_numa_placement;
typedef enum hgca_overflow { HGCA_OVERFLOW_AUTO = 0, HGCA_OVERFLOW_OFF = 1, HGCA_OVERFLOW_ALWAYS = 2 } hgca_overflow;
typedef enum hgca_handoff { HGCA_HANDOFF_AUTO = 0, HGCA_HANDOFF_POLL = 1, HGCA_HANDOFF_CALLBACK = 2 } hgca_handoff;
typedef enum hgca_store_writes {
  HGCA_STORE_WRITES_AUTO = 0,
  HGCA_STORE_WRITES_CACHED = 1,
  HGCA_STORE_WRITES_STREAMED = 2
} hgca_store_writes;

/* Mirrors hgca::Options; hgca_options_default() fills the documented defaults. */
typedef struct hgca_options {
  int32_t n_layers, n_q_heads, n_kv_heads, head_dim;
  hgca_dtype dtype;
  float sm_scale;
  int32_t window_blocks, block_tokens;
  float alpha, beta;
  int32_t min_keep, reeval_min_tokens, heads_per_task;
  hgca_backend backend;
  int32_t max_sequences;
  int32_t threads;
  int32_t deterministic; /* 0 or 1 */
  /* CPU engine tuning (hgca-tune's JSON; hgca_load_options_json) */
  int32_t threads_per_node, kv_split_tokens, max_packed_heads;
  hgca_isa isa;
  hgca_numa_placement numa_placement;
  /* DRAM store memory */
  int64_t store_chunk_bytes, store_limit_bytes;
  /* the overflow policy (CUDA backend; rates in GB/s, 0: the default) */
  hgca_overflow overflow;
  double overflow_margin;
  double overflow_cpu_gbps, overflow_cpu_row_gbps, overflow_h2d_gbps, overflow_gpu_gbps, overflow_gpu_row_gbps,
      overflow_window_gbps;
  /* CUDA backend: how its streams hand work to the host side (hgca::HostHandoff) */
  hgca_handoff handoff;
  /* how rows enter the DRAM store's blocks (hgca::StoreWrites) */
  hgca_store_writes store_writes;
  /* CUDA backend: bytes of FlashD2H's pinned staging slots (hgca::Options::staging_limit_bytes) */
  int64_t staging_limit_bytes;
} hgca_options;

/* Mirrors hgca::LayerStats but for the per-head context sizes, which hgca_get_layer_stats() writes apart. */
typedef struct hgca_layer_stats {
  int64_t sequences, window_tokens, window_capacity, store_tokens;
  double selected_fraction;
  int64_t reevaluations;
  double transfer_seconds;
  int64_t overflow_calls, overflow_items, overflow_bytes, overflow_rows;
  double overflow_predicted_cpu_seconds, overflow_predicted_gpu_seconds;
} hgca_layer_stats;

/* Mirrors hgca::NumaNodeStats. */
typedef struct hgca_numa_node_stats {
  int32_t threads;
  int32_t gpu_local; /* 0 or 1 */
  int64_t sequences;
} hgca_numa_node_stats;

/* Mirrors hgca::CpuStats but for the per-node entries, which hgca_get_cpu_stats() writes apart. */
typedef struct hgca_cpu_stats {
  hgca_isa isa;
  int32_t kv_split_tokens, max_packed_heads;
  int32_t numa_bound; /* 0 or 1 */
  int32_t numa_nodes; /* entries of the per-node array */
} hgca_cpu_stats;

/* Mirrors hgca::StoreMemoryStats: the DRAM store's memory on one NUMA node. */
typedef struct hgca_store_memory_stats {
  int32_t node;
  int64_t chunks, registered_chunks, bound_chunks, reserved_bytes, used_bytes, sync_growths,
      background_growths, released_chunks, registration_failures;
} hgca_store_memory_stats;

typedef struct hgca_runtime hgca_runtime;

/* The library's HGCA_VERSION as it was built: a caller compares it with the header's to find a
 * library other than the one it was compiled against. */
int32_t hgca_version(void);

void hgca_options_default(hgca_options* options);
/* A static string ("unknown status" for a value that is none of hgca_status's). */
const char* hgca_status_string(hgca_status status);
const char* hgca_last_error(void);

/* Loads the tuned fields (threads, threads_per_node, kv_split_tokens, max_packed_heads, isa,
 * numa_placement, overflow, overflow_margin, overflow_*_gbps) from a JSON file as hgca-tune writes
 * it into *inout; other fields keep their values, and on failure *inout is unchanged (see hgca::load_options_json). hgca_create also applies
 * the file named by the environment variable HGCA_CONFIG over the options it is given. */
hgca_status hgca_load_options_json(const char* path, hgca_options* inout);

/* On failure *out is left as it was. */
hgca_status hgca_create(const hgca_options* options, hgca_runtime** out);
/* Waits for the runtime's work and frees it; NULL is ignored, destroying a runtime twice is
 * undefined. */
void hgca_destroy(hgca_runtime* runtime);
/* The options the runtime runs with: those given to hgca_create, with HGCA_CONFIG's fields applied. */
hgca_status hgca_get_options(const hgca_runtime* runtime, hgca_options* out);

hgca_status hgca_add_sequence(hgca_runtime* runtime, uint64_t seq_id);
hgca_status hgca_release_sequence(hgca_runtime* runtime, uint64_t seq_id);

/* A step (as hgca::Runtime documents it): hgca_begin_step with batch_size >= 1 distinct, added
 * sequences and their new-token counts (>= 1 each); hgca_attention once for every layer, in any
 * order, over the batch's total_tokens rows (entry i's rows follow entry i-1's); hgca_end_step.
 * Calls on one runtime must not overlap (one thread, or the caller's lock).
 * hgca_begin_step takes the store memory the step's calls need: HGCA_OUT_OF_MEMORY here changes
 * nothing (release sequences or raise store_limit_bytes, then begin the step again). Memory for
 * selecting entries into context sets is taken during the step; running out of it is reported,
 * HGCA_OUT_OF_MEMORY, by a later call (the call that reports it did nothing else and may be made
 * again), and until then those entries stay unselected (no entry is lost). */
hgca_status hgca_begin_step(hgca_runtime* runtime, const uint64_t* seq_ids, const int32_t* n_new,
                            int32_t batch_size);
/* lse_out [total_tokens, n_q_heads] may be NULL; out and lse_out share no memory with q, k, v or
 * each other. With the CUDA backend the tensors are device memory (q, k, v, out 16-byte aligned,
 * lse_out 4-byte) and the call is enqueued on `stream` (a cudaStream_t; NULL: the legacy default
 * stream), as hgca::Runtime::attention documents; the host backend ignores `stream`. */
hgca_status hgca_attention(hgca_runtime* runtime, int32_t layer, int64_t total_tokens,
                           const void* q, const void* k, const void* v, void* out, float* lse_out,
                           void* stream);
hgca_status hgca_end_step(hgca_runtime* runtime);
/* Abandons the open step before its first hgca_attention (see Runtime::abort_step). */
hgca_status hgca_abort_step(hgca_runtime* runtime);

/* context_tokens may be NULL; otherwise it must hold n_kv_heads entries. */
hgca_status hgca_get_layer_stats(const hgca_runtime* runtime, int32_t layer, hgca_layer_stats* out,
                             int64_t* context_tokens, int32_t context_tokens_capacity);
/* One entry per NUMA node into out[0, capacity), and the number of nodes into *count (out may be
 * NULL with capacity 0, to ask for the count). */
hgca_status hgca_get_store_memory_stats(const hgca_runtime* runtime, hgca_store_memory_stats* out,
                                        int32_t capacity, int32_t* count);
hgca_status hgca_sequence_length(const hgca_runtime* runtime, uint64_t seq_id, int64_t* out);
/* nodes may be NULL (out->numa_nodes then says how many there are); otherwise it must hold
 * out->numa_nodes entries, nodes_capacity saying how many it holds. */
hgca_status hgca_get_cpu_stats(const hgca_runtime* runtime, hgca_cpu_stats* out, hgca_numa_node_stats* nodes,
                               int32_t nodes_capacity);
/* The NUMA node the sequence was assigned when added (hgca::Runtime::sequence_node). */
hgca_status hgca_sequence_node(const hgca_runtime* runtime, uint64_t seq_id, int32_t* out);
/* The sequence's whole history at `layer` (window and store) in token order, [length, n_kv_heads,
 * head_dim] in the runtime's dtype: k_out and v_out (not NULL, even for length 0) hold
 * hgca_sequence_length() × n_kv_heads × head_dim elements each. Between steps only
 * (HGCA_FAILED_PRECONDITION while a step is open). */
hgca_status hgca_read_kv(const hgca_runtime* runtime, int32_t layer, uint64_t seq_id, void* k_out,
                         void* v_out);
hgca_status hgca_synchronize(hgca_runtime* runtime);
/* The backend the runtime runs on (HGCA_BACKEND_AUTO resolved). */
hgca_status hgca_get_backend(const hgca_runtime* runtime, hgca_backend* out);
/* How the CUDA backend's streams hand work to the host (HGCA_HANDOFF_AUTO resolved to POLL or
 * CALLBACK); HGCA_HANDOFF_AUTO on the host backend. */
hgca_status hgca_get_handoff(const hgca_runtime* runtime, hgca_handoff* out);

#ifdef __cplusplus
}
#endif

#endif /* HGCA_HGCA_H_ */
