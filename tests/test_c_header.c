/* A C translation unit that includes nothing but hgca/hgca.h: it proves the header is valid C on
 * its own, and drives the C ABI end to end from C. test_c_api.cpp calls the functions below.
 * No other header is included on purpose (not even the C library's), so everything here is
 * written with what hgca.h brings: <stdint.h>. */
#include "hgca/hgca.h"

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "test_c_header.c must be compiled as C11 or later"
#endif

_Static_assert(sizeof(hgca_status) == sizeof(int32_t) || sizeof(hgca_status) == sizeof(int),
               "hgca_status is an int-sized enum");
_Static_assert(HGCA_OK == 0 && HGCA_INTERNAL == 6, "status values");
_Static_assert(HGCA_FLOAT32 == 0 && HGCA_FLOAT16 == 1 && HGCA_BFLOAT16 == 2, "dtype values");
_Static_assert(HGCA_BACKEND_AUTO == 0 && HGCA_BACKEND_HOST == 1 && HGCA_BACKEND_CUDA == 2,
               "backend values");

/* Declared here (and in test_c_api.cpp with C linkage). */
int hgca_test_c_smoke(void);
int64_t hgca_test_c_options_layout(int64_t* offsets, int32_t capacity);
int64_t hgca_test_c_layer_stats_layout(int64_t* offsets, int32_t capacity);
int64_t hgca_test_c_store_memory_stats_layout(int64_t* offsets, int32_t capacity);

#define OFFSET(object, field) ((int64_t)((const char*)&(object).field - (const char*)&(object)))

/* Offsets of hgca_options' fields in declaration order as C lays them out; returns its size. */
int64_t hgca_test_c_options_layout(int64_t* offsets, int32_t capacity) {
  hgca_options o;
  const int64_t all[35] = {
      OFFSET(o, n_layers),      OFFSET(o, n_q_heads),      OFFSET(o, n_kv_heads),
      OFFSET(o, head_dim),      OFFSET(o, dtype),          OFFSET(o, sm_scale),
      OFFSET(o, window_blocks), OFFSET(o, block_tokens),   OFFSET(o, alpha),
      OFFSET(o, beta),          OFFSET(o, min_keep),       OFFSET(o, reeval_min_tokens),
      OFFSET(o, heads_per_task), OFFSET(o, backend),       OFFSET(o, max_sequences),
      OFFSET(o, threads),
      OFFSET(o, deterministic), OFFSET(o, threads_per_node), OFFSET(o, kv_split_tokens),
      OFFSET(o, max_packed_heads), OFFSET(o, isa),        OFFSET(o, numa_placement),
      OFFSET(o, store_chunk_bytes), OFFSET(o, store_limit_bytes),
      OFFSET(o, overflow),      OFFSET(o, overflow_margin), OFFSET(o, overflow_cpu_gbps),
      OFFSET(o, overflow_cpu_row_gbps), OFFSET(o, overflow_h2d_gbps), OFFSET(o, overflow_gpu_gbps),
      OFFSET(o, overflow_gpu_row_gbps), OFFSET(o, overflow_window_gbps), OFFSET(o, handoff),
      OFFSET(o, store_writes),  OFFSET(o, staging_limit_bytes)};
  for (int32_t i = 0; i < capacity && i < 35; ++i) offsets[i] = all[i];
  return (int64_t)sizeof(hgca_options);
}

int64_t hgca_test_c_layer_stats_layout(int64_t* offsets, int32_t capacity) {
  hgca_layer_stats s;
  const int64_t all[13] = {OFFSET(s, sequences),     OFFSET(s, window_tokens),
                           OFFSET(s, window_capacity), OFFSET(s, store_tokens),
                           OFFSET(s, selected_fraction), OFFSET(s, reevaluations),
                           OFFSET(s, transfer_seconds), OFFSET(s, overflow_calls),
                           OFFSET(s, overflow_items), OFFSET(s, overflow_bytes),
                           OFFSET(s, overflow_rows), OFFSET(s, overflow_predicted_cpu_seconds),
                           OFFSET(s, overflow_predicted_gpu_seconds)};
  for (int32_t i = 0; i < capacity && i < 13; ++i) offsets[i] = all[i];
  return (int64_t)sizeof(hgca_layer_stats);
}

int64_t hgca_test_c_store_memory_stats_layout(int64_t* offsets, int32_t capacity) {
  hgca_store_memory_stats s;
  const int64_t all[10] = {OFFSET(s, node),          OFFSET(s, chunks),          OFFSET(s, registered_chunks),
                           OFFSET(s, bound_chunks),  OFFSET(s, reserved_bytes),  OFFSET(s, used_bytes),
                           OFFSET(s, sync_growths),  OFFSET(s, background_growths), OFFSET(s, released_chunks),
                           OFFSET(s, registration_failures)};
  for (int32_t i = 0; i < capacity && i < 10; ++i) offsets[i] = all[i];
  return (int64_t)sizeof(hgca_store_memory_stats);
}

/* ---- the smoke run ---- */

#define CHECK(condition)              \
  do {                                \
    if (!(condition)) return __LINE__; \
  } while (0)

enum { kLayers = 2, kHq = 4, kHkv = 2, kD = 8, kGroup = kHq / kHkv, kMaxTokens = 16 };

static int contains(const char* text, const char* part) {
  if (!text) return 0;
  for (const char* t = text; *t; ++t) {
    const char* a = t;
    const char* b = part;
    while (*a && *b && *a == *b) {
      ++a;
      ++b;
    }
    if (!*b) return 1;
  }
  return !*part;
}

static float absf(float x) { return x < 0 ? -x : x; }

/* K of token `pos` of sequence `seq` at `layer`: exact in fp32, different per token. */
static float k_value(uint64_t seq, int32_t layer, int64_t pos, int32_t h, int32_t i) {
  const int64_t x = (int64_t)(seq * 31u) + layer * 17 + pos * 7 + h * 5 + i * 3;
  return (float)(x % 23 - 11) * 0.0625f;
}
/* V is the same for every token: any convex combination of V rows, so the output, is this. */
static float v_value(int32_t h, int32_t i) { return (float)(h + 1) * 0.25f + (float)i * 0.125f; }
static float q_value(int64_t row, int32_t h, int32_t i) {
  return (float)((row * 13 + h * 7 + i * 5) % 19 - 9) * 0.125f;
}

static float q[kMaxTokens * kHq * kD], k[kMaxTokens * kHkv * kD], v[kMaxTokens * kHkv * kD];
static float out[kMaxTokens * kHq * kD], lse[kMaxTokens * kHq];
static float k_read[64 * kHkv * kD], v_read[64 * kHkv * kD];

/* One step over `n` sequences; `lengths` holds each sequence's length before the step. */
static int run_step(hgca_runtime* rt, const uint64_t* ids, const int32_t* n_new, int32_t n,
                    int64_t* lengths) {
  int64_t total = 0;
  for (int32_t b = 0; b < n; ++b) total += n_new[b];
  CHECK(total <= kMaxTokens);
  CHECK(hgca_begin_step(rt, ids, n_new, n) == HGCA_OK);
  for (int32_t layer = kLayers - 1; layer >= 0; --layer) { /* any order is allowed */
    int64_t row = 0;
    for (int32_t b = 0; b < n; ++b) {
      for (int32_t t = 0; t < n_new[b]; ++t, ++row) {
        for (int32_t h = 0; h < kHkv; ++h) {
          for (int32_t i = 0; i < kD; ++i) {
            k[(row * kHkv + h) * kD + i] = k_value(ids[b], layer, lengths[b] + t, h, i);
            v[(row * kHkv + h) * kD + i] = v_value(h, i);
          }
        }
        for (int32_t h = 0; h < kHq; ++h) {
          for (int32_t i = 0; i < kD; ++i) q[(row * kHq + h) * kD + i] = q_value(row, h, i);
        }
      }
    }
    for (int64_t j = 0; j < total * kHq * kD; ++j) out[j] = -12345.0f;
    for (int64_t j = 0; j < total * kHq; ++j) lse[j] = -12345.0f;
    CHECK(hgca_attention(rt, layer, total, q, k, v, out, layer == 0 ? lse : 0, 0) == HGCA_OK);
    for (int64_t r = 0; r < total; ++r) {
      for (int32_t h = 0; h < kHq; ++h) {
        for (int32_t i = 0; i < kD; ++i) {
          CHECK(absf(out[(r * kHq + h) * kD + i] - v_value(h / kGroup, i)) <= 1e-5f);
        }
        if (layer == 0) {
          const float x = lse[r * kHq + h];
          CHECK(x == x && x > -1e30f && x < 1e30f);
        }
      }
    }
  }
  CHECK(hgca_end_step(rt) == HGCA_OK);
  for (int32_t b = 0; b < n; ++b) {
    lengths[b] += n_new[b];
    int64_t len = -1;
    CHECK(hgca_sequence_length(rt, ids[b], &len) == HGCA_OK);
    CHECK(len == lengths[b]);
  }
  return 0;
}

static int check_history(const hgca_runtime* rt, uint64_t id, int64_t length) {
  CHECK(length <= 64);
  for (int32_t layer = 0; layer < kLayers; ++layer) {
    CHECK(hgca_read_kv(rt, layer, id, k_read, v_read) == HGCA_OK);
    for (int64_t t = 0; t < length; ++t) {
      for (int32_t h = 0; h < kHkv; ++h) {
        for (int32_t i = 0; i < kD; ++i) {
          CHECK(k_read[(t * kHkv + h) * kD + i] == k_value(id, layer, t, h, i));
          CHECK(v_read[(t * kHkv + h) * kD + i] == v_value(h, i));
        }
      }
    }
  }
  return 0;
}

/* Returns 0 on success, else the line of the first check that failed. */
int hgca_test_c_smoke(void) {
  CHECK(hgca_version() == HGCA_VERSION);
  hgca_options o;
  hgca_options_default(&o);
  CHECK(o.n_layers == 0 && o.window_blocks == 16 && o.block_tokens == 64);
  CHECK(o.dtype == HGCA_BFLOAT16 && o.backend == HGCA_BACKEND_AUTO && o.deterministic == 0);
  CHECK(o.alpha == 0.1f && o.beta == 1.0f && o.min_keep == 4 && o.heads_per_task == 1);
  CHECK(o.store_chunk_bytes == ((int64_t)32 << 20) && o.store_limit_bytes == 0);

  hgca_runtime* rt = 0;
  CHECK(hgca_create(&o, &rt) == HGCA_INVALID_ARGUMENT); /* no model shape yet */
  CHECK(rt == 0);
  CHECK(contains(hgca_last_error(), "n_layers = 0"));
  CHECK(hgca_create(0, &rt) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "options"));
  /* C may store any int in an enum field: refused by value (the library reads it without loading
   * it as the enum type, which in C++ is undefined past the enumerators; the sanitize preset's
   * UBSan fails this otherwise). */
  {
    hgca_options bad = o;
    bad.n_layers = 1;
    bad.n_q_heads = bad.n_kv_heads = 1;
    bad.head_dim = 16;
    bad.isa = (hgca_isa)99;
    CHECK(hgca_create(&bad, &rt) == HGCA_INVALID_ARGUMENT && contains(hgca_last_error(), "isa = 99"));
    bad.isa = HGCA_ISA_AUTO;
    bad.dtype = (hgca_dtype)-7;
    CHECK(hgca_create(&bad, &rt) == HGCA_INVALID_ARGUMENT && contains(hgca_last_error(), "dtype = -7"));
    bad.dtype = HGCA_FLOAT32;
    bad.numa_placement = (hgca_numa_placement)1000;
    CHECK(hgca_create(&bad, &rt) == HGCA_INVALID_ARGUMENT && contains(hgca_last_error(), "numa_placement = 1000"));
    bad.numa_placement = HGCA_NUMA_PLACEMENT_AUTO;
    bad.store_writes = (hgca_store_writes)64;
    CHECK(hgca_create(&bad, &rt) == HGCA_INVALID_ARGUMENT && contains(hgca_last_error(), "store_writes = 64"));
    CHECK(rt == 0);
  }
  CHECK(contains(hgca_status_string((hgca_status)99), "unknown"));

  o.n_layers = kLayers;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = HGCA_FLOAT32;
  o.window_blocks = 2;
  o.block_tokens = 4; /* W = 8: the steps below evict */
  o.reeval_min_tokens = 4;
  o.backend = HGCA_BACKEND_HOST;
  o.threads = 2;
  o.deterministic = 1;
  CHECK(hgca_create(&o, &rt) == HGCA_OK);
  CHECK(rt != 0);
  {
    hgca_options in_effect;
    hgca_options_default(&in_effect);
    CHECK(hgca_get_options(rt, &in_effect) == HGCA_OK);
    CHECK(in_effect.n_layers == kLayers && in_effect.head_dim == kD && in_effect.dtype == HGCA_FLOAT32);
    CHECK(in_effect.block_tokens == 4 && in_effect.deterministic == 1 && in_effect.threads == 2);
    CHECK(hgca_get_options(rt, 0) == HGCA_INVALID_ARGUMENT && contains(hgca_last_error(), "out is null"));
  }

  const uint64_t ids[2] = {7, 9};
  int64_t lengths[2] = {0, 0};
  CHECK(hgca_add_sequence(rt, 7) == HGCA_OK);
  CHECK(hgca_add_sequence(rt, 9) == HGCA_OK);
  CHECK(hgca_add_sequence(rt, 9) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "seq_id = 9"));

  const int32_t prefill[2] = {10, 3}, decode[2] = {1, 1}, append[2] = {2, 5};
  int failed = run_step(rt, ids, prefill, 2, lengths);
  if (failed) return failed;
  failed = run_step(rt, ids, decode, 2, lengths);
  if (failed) return failed;
  failed = run_step(rt, ids, append, 2, lengths);
  if (failed) return failed;
  CHECK(hgca_synchronize(rt) == HGCA_OK);
  failed = check_history(rt, 7, lengths[0]);
  if (failed) return failed;
  failed = check_history(rt, 9, lengths[1]);
  if (failed) return failed;

  hgca_layer_stats stats;
  int64_t context[kHkv] = {-1, -1};
  CHECK(hgca_get_layer_stats(rt, 1, &stats, context, kHkv) == HGCA_OK);
  CHECK(stats.sequences == 2);
  CHECK(stats.window_capacity == 2 * 8);
  CHECK(stats.window_tokens + stats.store_tokens == lengths[0] + lengths[1]);
  CHECK(stats.store_tokens > 0);
  for (int32_t h = 0; h < kHkv; ++h) CHECK(context[h] >= 0 && context[h] <= stats.store_tokens);
  CHECK(stats.selected_fraction >= 0.0 && stats.selected_fraction <= 1.0);
  CHECK(hgca_get_layer_stats(rt, 0, &stats, 0, 0) == HGCA_OK);

  /* The CPU pool: every live sequence is on one of its nodes. */
  hgca_cpu_stats cpu;
  hgca_numa_node_stats nodes[64];
  CHECK(hgca_get_cpu_stats(rt, &cpu, 0, 0) == HGCA_OK);
  CHECK(cpu.numa_nodes >= 1 && cpu.numa_nodes <= 64);
  CHECK(cpu.isa != HGCA_ISA_AUTO); /* resolved to the path that runs */
  CHECK(hgca_get_cpu_stats(rt, &cpu, nodes, 64) == HGCA_OK);
  int64_t placed = 0;
  int32_t threads = 0;
  for (int32_t n = 0; n < cpu.numa_nodes; ++n) {
    placed += nodes[n].sequences;
    threads += nodes[n].threads;
  }
  CHECK(placed == 2 && threads >= 1 && threads <= 2);
  int32_t node = -1;
  CHECK(hgca_sequence_node(rt, 7, &node) == HGCA_OK);
  CHECK(node >= 0 && node < cpu.numa_nodes && nodes[node].threads > 0);

  hgca_store_memory_stats memory[4];
  int32_t memory_nodes = 0;
  CHECK(hgca_get_store_memory_stats(rt, memory, 4, &memory_nodes) == HGCA_OK);
  CHECK(memory_nodes >= 1 && memory[0].node == 0);
  CHECK(memory[0].chunks >= 1 && memory[0].used_bytes > 0 && memory[0].used_bytes <= memory[0].reserved_bytes);
  memory_nodes = 0;
  CHECK(hgca_get_store_memory_stats(rt, 0, 0, &memory_nodes) == HGCA_OK && memory_nodes >= 1);
  CHECK(hgca_get_store_memory_stats(rt, 0, 1, &memory_nodes) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "capacity = 1"));

  /* Errors from C. */
  const uint64_t unknown[1] = {42};
  const int32_t one[1] = {1};
  CHECK(hgca_begin_step(rt, unknown, one, 1) == HGCA_NOT_FOUND);
  CHECK(contains(hgca_last_error(), "42"));
  CHECK(hgca_attention(rt, 0, 1, q, k, v, out, 0, 0) == HGCA_FAILED_PRECONDITION);
  CHECK(hgca_end_step(rt) == HGCA_FAILED_PRECONDITION);
  CHECK(hgca_abort_step(rt) == HGCA_FAILED_PRECONDITION);
  CHECK(contains(hgca_last_error(), "abort_step: no step is open"));
  CHECK(hgca_abort_step(0) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "hgca_abort_step") && contains(hgca_last_error(), "runtime"));
  int64_t before_abort = -1, after_abort = -2;
  CHECK(hgca_sequence_length(rt, ids[0], &before_abort) == HGCA_OK);
  CHECK(hgca_begin_step(rt, ids, one, 1) == HGCA_OK);
  CHECK(hgca_abort_step(rt) == HGCA_OK);
  CHECK(hgca_sequence_length(rt, ids[0], &after_abort) == HGCA_OK && after_abort == before_abort);
  CHECK(hgca_get_layer_stats(rt, kLayers, &stats, 0, 0) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "layer = 2"));
  CHECK(hgca_add_sequence(0, 1) == HGCA_INVALID_ARGUMENT);
  CHECK(contains(hgca_last_error(), "runtime"));
  CHECK(hgca_status_string(HGCA_NOT_FOUND) != 0 && hgca_status_string(HGCA_NOT_FOUND)[0] != 0);

  /* Still usable after the errors: release one, step the other. */
  CHECK(hgca_release_sequence(rt, 9) == HGCA_OK);
  int64_t len = 0;
  CHECK(hgca_sequence_length(rt, 9, &len) == HGCA_NOT_FOUND);
  failed = run_step(rt, ids, one, 1, lengths);
  if (failed) return failed;
  failed = check_history(rt, 7, lengths[0]);
  if (failed) return failed;

  hgca_destroy(rt);
  hgca_destroy(0);
  return 0;
}
