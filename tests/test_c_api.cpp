// The C ABI (hgca.h): defaults and layout mirror the C++ API, a run through it is bit-identical to
// the C++ Runtime fed the same inputs, bad calls give status codes and hgca_last_error() messages,
// and a translation unit compiled as C (test_c_header.c) drives it end to end.
#include "hgca/hgca.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hgca/hgca.hpp"
#include "reference/reference.hpp"

extern "C" {
int hgca_test_c_smoke(void);
int64_t hgca_test_c_options_layout(int64_t* offsets, int32_t capacity);
int64_t hgca_test_c_layer_stats_layout(int64_t* offsets, int32_t capacity);
int64_t hgca_test_c_store_memory_stats_layout(int64_t* offsets, int32_t capacity);
}

namespace hgca {
namespace {

using ::testing::HasSubstr;

// The C enums mirror the C++ ones value for value.
static_assert(HGCA_OK == static_cast<int>(StatusCode::kOk));
static_assert(HGCA_INVALID_ARGUMENT == static_cast<int>(StatusCode::kInvalidArgument));
static_assert(HGCA_NOT_FOUND == static_cast<int>(StatusCode::kNotFound));
static_assert(HGCA_FAILED_PRECONDITION == static_cast<int>(StatusCode::kFailedPrecondition));
static_assert(HGCA_OUT_OF_MEMORY == static_cast<int>(StatusCode::kOutOfMemory));
static_assert(HGCA_UNSUPPORTED == static_cast<int>(StatusCode::kUnsupported));
static_assert(HGCA_INTERNAL == static_cast<int>(StatusCode::kInternal));
static_assert(HGCA_FLOAT32 == static_cast<int>(DType::kFloat32));
static_assert(HGCA_FLOAT16 == static_cast<int>(DType::kFloat16));
static_assert(HGCA_BFLOAT16 == static_cast<int>(DType::kBFloat16));
static_assert(HGCA_BACKEND_AUTO == static_cast<int>(Backend::kAuto));
static_assert(HGCA_BACKEND_HOST == static_cast<int>(Backend::kHost));
static_assert(HGCA_BACKEND_CUDA == static_cast<int>(Backend::kCuda));

/// The runtime, destroyed at scope exit.
struct CRuntime {
  hgca_runtime* rt = nullptr;
  CRuntime() = default;
  CRuntime(const CRuntime&) = delete;
  CRuntime& operator=(const CRuntime&) = delete;
  ~CRuntime() { hgca_destroy(rt); }
};

hgca_options c_options(hgca_dtype dtype) {
  hgca_options o;
  hgca_options_default(&o);
  o.n_layers = 2;
  o.n_q_heads = 4;
  o.n_kv_heads = 2;
  o.head_dim = 16;
  o.dtype = dtype;
  o.window_blocks = 2;
  o.block_tokens = 4;       // W = 8: prefills evict
  o.reeval_min_tokens = 4;  // appends re-evaluate
  o.min_keep = 2;
  o.heads_per_task = 2;     // padding of merged heads
  o.backend = HGCA_BACKEND_HOST;
  o.threads = 2;
  o.deterministic = 1;
  return o;
}

/// The same options for the C++ API, set field by field (not through the C ABI's conversion).
Options cpp_options(DType dtype) {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = 4;
  o.n_kv_heads = 2;
  o.head_dim = 16;
  o.dtype = dtype;
  o.window_blocks = 2;
  o.block_tokens = 4;
  o.reeval_min_tokens = 4;
  o.min_keep = 2;
  o.heads_per_task = 2;
  o.backend = Backend::kHost;
  o.threads = 2;
  o.deterministic = true;
  return o;
}

void expect_error(hgca_status got, hgca_status want, std::initializer_list<const char*> parts) {
  EXPECT_EQ(got, want) << "got " << hgca_status_string(got) << ": " << hgca_last_error();
  for (const char* p : parts) EXPECT_THAT(hgca_last_error(), HasSubstr(p));
}

TEST(CApi, OptionsDefaultEqualsCppDefaults) {
  hgca_options c;
  std::memset(&c, 0xAB, sizeof c);  // every field must be written
  hgca_options_default(&c);
  const Options d;
  EXPECT_EQ(c.n_layers, d.n_layers);
  EXPECT_EQ(c.n_q_heads, d.n_q_heads);
  EXPECT_EQ(c.n_kv_heads, d.n_kv_heads);
  EXPECT_EQ(c.head_dim, d.head_dim);
  EXPECT_EQ(static_cast<int>(c.dtype), static_cast<int>(d.dtype));
  EXPECT_EQ(c.sm_scale, d.sm_scale);
  EXPECT_EQ(c.window_blocks, d.window_blocks);
  EXPECT_EQ(c.block_tokens, d.block_tokens);
  EXPECT_EQ(c.alpha, d.alpha);
  EXPECT_EQ(c.beta, d.beta);
  EXPECT_EQ(c.min_keep, d.min_keep);
  EXPECT_EQ(c.reeval_min_tokens, d.reeval_min_tokens);
  EXPECT_EQ(c.heads_per_task, d.heads_per_task);
  EXPECT_EQ(static_cast<int>(c.backend), static_cast<int>(d.backend));
  EXPECT_EQ(c.max_sequences, d.max_sequences);
  EXPECT_EQ(c.threads, d.threads);
  EXPECT_EQ(c.deterministic, d.deterministic ? 1 : 0);
  EXPECT_EQ(c.threads_per_node, d.threads_per_node);
  EXPECT_EQ(c.kv_split_tokens, d.kv_split_tokens);
  EXPECT_EQ(c.max_packed_heads, d.max_packed_heads);
  EXPECT_EQ(static_cast<int>(c.isa), static_cast<int>(d.isa));
  EXPECT_EQ(static_cast<int>(c.numa_placement), static_cast<int>(d.numa_placement));
  EXPECT_EQ(c.store_chunk_bytes, d.store_chunk_bytes);
  EXPECT_EQ(c.store_limit_bytes, d.store_limit_bytes);
  EXPECT_EQ(static_cast<int>(c.overflow), static_cast<int>(d.overflow));
  EXPECT_EQ(c.overflow_margin, d.overflow_margin);
  EXPECT_EQ(c.overflow_cpu_gbps, d.overflow_cpu_gbps);
  EXPECT_EQ(c.overflow_cpu_row_gbps, d.overflow_cpu_row_gbps);
  EXPECT_EQ(c.overflow_h2d_gbps, d.overflow_h2d_gbps);
  EXPECT_EQ(c.overflow_gpu_gbps, d.overflow_gpu_gbps);
  EXPECT_EQ(c.overflow_gpu_row_gbps, d.overflow_gpu_row_gbps);
  EXPECT_EQ(c.overflow_window_gbps, d.overflow_window_gbps);
  EXPECT_EQ(static_cast<int>(c.handoff), static_cast<int>(d.handoff));
  EXPECT_EQ(static_cast<int>(c.store_writes), static_cast<int>(d.store_writes));
  EXPECT_EQ(c.staging_limit_bytes, d.staging_limit_bytes);
  hgca_options_default(nullptr);  // a no-op, not a crash
}

TEST(CApi, StructLayoutIsTheSameInCAndCpp) {
  int64_t c_offsets[35] = {};
  const int64_t c_size = hgca_test_c_options_layout(c_offsets, 35);
  const int64_t cpp_offsets[35] = {
      offsetof(hgca_options, n_layers),       offsetof(hgca_options, n_q_heads),
      offsetof(hgca_options, n_kv_heads),     offsetof(hgca_options, head_dim),
      offsetof(hgca_options, dtype),          offsetof(hgca_options, sm_scale),
      offsetof(hgca_options, window_blocks),  offsetof(hgca_options, block_tokens),
      offsetof(hgca_options, alpha),          offsetof(hgca_options, beta),
      offsetof(hgca_options, min_keep),       offsetof(hgca_options, reeval_min_tokens),
      offsetof(hgca_options, heads_per_task), offsetof(hgca_options, backend),
      offsetof(hgca_options, max_sequences),  offsetof(hgca_options, threads),
      offsetof(hgca_options, deterministic),
      offsetof(hgca_options, threads_per_node), offsetof(hgca_options, kv_split_tokens),
      offsetof(hgca_options, max_packed_heads),
      offsetof(hgca_options, isa),            offsetof(hgca_options, numa_placement),
      offsetof(hgca_options, store_chunk_bytes), offsetof(hgca_options, store_limit_bytes),
      offsetof(hgca_options, overflow),       offsetof(hgca_options, overflow_margin),
      offsetof(hgca_options, overflow_cpu_gbps), offsetof(hgca_options, overflow_cpu_row_gbps),
      offsetof(hgca_options, overflow_h2d_gbps), offsetof(hgca_options, overflow_gpu_gbps),
      offsetof(hgca_options, overflow_gpu_row_gbps), offsetof(hgca_options, overflow_window_gbps),
      offsetof(hgca_options, handoff),        offsetof(hgca_options, store_writes),
      offsetof(hgca_options, staging_limit_bytes)};
  EXPECT_EQ(c_size, static_cast<int64_t>(sizeof(hgca_options)));
  for (int i = 0; i < 35; ++i) EXPECT_EQ(c_offsets[i], cpp_offsets[i]) << "field " << i;

  int64_t c_stats[13] = {};
  const int64_t c_stats_size = hgca_test_c_layer_stats_layout(c_stats, 13);
  const int64_t cpp_stats[13] = {
      offsetof(hgca_layer_stats, sequences),     offsetof(hgca_layer_stats, window_tokens),
      offsetof(hgca_layer_stats, window_capacity), offsetof(hgca_layer_stats, store_tokens),
      offsetof(hgca_layer_stats, selected_fraction), offsetof(hgca_layer_stats, reevaluations),
      offsetof(hgca_layer_stats, transfer_seconds), offsetof(hgca_layer_stats, overflow_calls),
      offsetof(hgca_layer_stats, overflow_items), offsetof(hgca_layer_stats, overflow_bytes),
      offsetof(hgca_layer_stats, overflow_rows), offsetof(hgca_layer_stats, overflow_predicted_cpu_seconds),
      offsetof(hgca_layer_stats, overflow_predicted_gpu_seconds)};
  EXPECT_EQ(c_stats_size, static_cast<int64_t>(sizeof(hgca_layer_stats)));
  for (int i = 0; i < 13; ++i) EXPECT_EQ(c_stats[i], cpp_stats[i]) << "field " << i;

  int64_t c_memory[10] = {};
  const int64_t c_memory_size = hgca_test_c_store_memory_stats_layout(c_memory, 10);
  const int64_t cpp_memory[10] = {
      offsetof(hgca_store_memory_stats, node),          offsetof(hgca_store_memory_stats, chunks),
      offsetof(hgca_store_memory_stats, registered_chunks), offsetof(hgca_store_memory_stats, bound_chunks),
      offsetof(hgca_store_memory_stats, reserved_bytes), offsetof(hgca_store_memory_stats, used_bytes),
      offsetof(hgca_store_memory_stats, sync_growths),  offsetof(hgca_store_memory_stats, background_growths),
      offsetof(hgca_store_memory_stats, released_chunks), offsetof(hgca_store_memory_stats, registration_failures)};
  EXPECT_EQ(c_memory_size, static_cast<int64_t>(sizeof(hgca_store_memory_stats)));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c_memory[i], cpp_memory[i]) << "field " << i;
}

TEST(CApi, StatusStringMatchesCpp) {
  for (int c = HGCA_OK; c <= HGCA_INTERNAL; ++c) {
    EXPECT_STREQ(hgca_status_string(static_cast<hgca_status>(c)), to_string(static_cast<StatusCode>(c)));
  }
}

TEST(CApi, CreateAndDestroy) {
  for (hgca_dtype dtype : {HGCA_FLOAT32, HGCA_FLOAT16, HGCA_BFLOAT16}) {
    const hgca_options o = c_options(dtype);
    CRuntime r;
    ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK) << hgca_last_error();
    ASSERT_NE(r.rt, nullptr);
    EXPECT_EQ(hgca_add_sequence(r.rt, 1), HGCA_OK);
    int64_t len = -1;
    EXPECT_EQ(hgca_sequence_length(r.rt, 1, &len), HGCA_OK);
    EXPECT_EQ(len, 0);
    EXPECT_EQ(hgca_synchronize(r.rt), HGCA_OK);
    hgca_backend backend = HGCA_BACKEND_CUDA;
    EXPECT_EQ(hgca_get_backend(r.rt, &backend), HGCA_OK);
    EXPECT_EQ(backend, HGCA_BACKEND_HOST);  // as asked
    EXPECT_EQ(hgca_get_backend(r.rt, nullptr), HGCA_INVALID_ARGUMENT);
    EXPECT_STREQ(hgca_last_error(), "hgca_get_backend: out is null");
    hgca_handoff handoff = HGCA_HANDOFF_POLL;
    EXPECT_EQ(hgca_get_handoff(r.rt, &handoff), HGCA_OK);
    EXPECT_EQ(handoff, HGCA_HANDOFF_AUTO);  // the host backend has no streams
    EXPECT_EQ(hgca_get_handoff(nullptr, &handoff), HGCA_INVALID_ARGUMENT);
    EXPECT_STREQ(hgca_last_error(), "hgca_get_handoff: runtime is null");
  }
  hgca_destroy(nullptr);  // like free(NULL)
}

// The CPU pool and the sequences' nodes, as a C++ runtime of the same options reports them.
TEST(CApi, CpuStatsAndSequenceNodes) {
  hgca_options o = c_options(HGCA_FLOAT32);
  o.kv_split_tokens = 96;
  o.max_packed_heads = 3;
  o.isa = HGCA_ISA_PORTABLE;
  Options co = cpp_options(DType::kFloat32);
  co.kv_split_tokens = 96;
  co.max_packed_heads = 3;
  co.isa = CpuIsa::kPortable;
  CRuntime r;
  ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK) << hgca_last_error();
  std::unique_ptr<Runtime> cpp;
  ASSERT_TRUE(Runtime::create(co, &cpp).is_ok());
  for (uint64_t id : {5, 6, 7}) {
    ASSERT_EQ(hgca_add_sequence(r.rt, id), HGCA_OK);
    ASSERT_TRUE(cpp->add_sequence(id).is_ok());
  }
  CpuStats want;
  ASSERT_TRUE(cpp->cpu_stats(&want).is_ok());

  hgca_cpu_stats st;
  std::memset(&st, 0xAB, sizeof st);
  ASSERT_EQ(hgca_get_cpu_stats(r.rt, &st, nullptr, 0), HGCA_OK) << hgca_last_error();  // the count only
  EXPECT_EQ(st.isa, HGCA_ISA_PORTABLE);
  EXPECT_EQ(st.kv_split_tokens, 96);
  EXPECT_EQ(st.max_packed_heads, 3);
  EXPECT_EQ(st.numa_bound, want.numa_bound ? 1 : 0);
  ASSERT_EQ(st.numa_nodes, static_cast<int32_t>(want.nodes.size()));
  ASSERT_GE(st.numa_nodes, 1);

  std::vector<hgca_numa_node_stats> nodes(static_cast<std::size_t>(st.numa_nodes) + 1, {-1, -1, -1});
  expect_error(hgca_get_cpu_stats(r.rt, &st, nodes.data(), st.numa_nodes - 1), HGCA_INVALID_ARGUMENT,
               {"nodes_capacity = ", "expected ≥"});
  EXPECT_EQ(nodes[0].threads, -1);  // nothing written
  ASSERT_EQ(hgca_get_cpu_stats(r.rt, &st, nodes.data(), st.numa_nodes + 1), HGCA_OK) << hgca_last_error();
  int64_t sequences = 0;
  for (int32_t n = 0; n < st.numa_nodes; ++n) {
    EXPECT_EQ(nodes[n].threads, want.nodes[n].threads);
    EXPECT_EQ(nodes[n].gpu_local, want.nodes[n].gpu_local ? 1 : 0);
    EXPECT_EQ(nodes[n].sequences, want.nodes[n].sequences);
    sequences += nodes[n].sequences;
  }
  EXPECT_EQ(sequences, 3);
  EXPECT_EQ(nodes.back().threads, -1);  // beyond the nodes: untouched

  for (uint64_t id : {5, 6, 7}) {
    int32_t node = -1, cpp_node = -2;
    ASSERT_EQ(hgca_sequence_node(r.rt, id, &node), HGCA_OK) << hgca_last_error();
    ASSERT_TRUE(cpp->sequence_node(id, &cpp_node).is_ok());
    EXPECT_EQ(node, cpp_node);
    EXPECT_GE(node, 0);
    EXPECT_LT(node, st.numa_nodes);
  }
  int32_t node = -1;
  expect_error(hgca_sequence_node(r.rt, 8, &node), HGCA_NOT_FOUND, {"sequence_node", "seq_id = 8"});
  expect_error(hgca_sequence_node(r.rt, 5, nullptr), HGCA_INVALID_ARGUMENT, {"out is null"});
  expect_error(hgca_get_cpu_stats(r.rt, nullptr, nullptr, 0), HGCA_INVALID_ARGUMENT, {"hgca_get_cpu_stats", "out is null"});
}

// --- a run through the C ABI is bit-identical to the C++ API ---

class CApiBitIdentical : public ::testing::TestWithParam<DType> {};

struct StepPlan {
  std::vector<SeqId> ids;
  std::vector<int32_t> n_new;
  std::vector<SeqId> add_before, release_before;
};

TEST_P(CApiBitIdentical, StepsMatchTheCppRuntime) {
  const DType dtype = GetParam();
  const Options opt = cpp_options(dtype);
  const hgca_options copt = c_options(static_cast<hgca_dtype>(dtype));
  std::unique_ptr<Runtime> cpp;
  {
    const Status s = Runtime::create(opt, &cpp);
    ASSERT_TRUE(s.is_ok()) << s.message();
  }
  CRuntime c;
  ASSERT_EQ(hgca_create(&copt, &c.rt), HGCA_OK) << hgca_last_error();

  const int32_t hq = opt.n_q_heads, hkv = opt.n_kv_heads, d = opt.head_dim;
  const std::vector<StepPlan> plan = {
      {{1, 2}, {11, 3}, {1, 2}, {}},        // prefill past the window
      {{1, 2}, {1, 1}, {}, {}},             // decode
      {{2, 1}, {6, 1}, {}, {}},             // append (re-evaluation), any order
      {{1, 2, 3}, {1, 1, 9}, {3}, {}},      // a new sequence joins with a prefill
      {{3, 1}, {1, 4}, {}, {2}},            // one leaves
      {{1, 3}, {1, 1}, {}, {}},
  };
  std::mt19937_64 rng(11);
  for (std::size_t step = 0; step < plan.size(); ++step) {
    SCOPED_TRACE(testing::Message() << "step " << step);
    const StepPlan& p = plan[step];
    for (SeqId id : p.add_before) {
      ASSERT_TRUE(cpp->add_sequence(id).is_ok());
      ASSERT_EQ(hgca_add_sequence(c.rt, id), HGCA_OK) << hgca_last_error();
    }
    for (SeqId id : p.release_before) {
      ASSERT_TRUE(cpp->release_sequence(id).is_ok());
      ASSERT_EQ(hgca_release_sequence(c.rt, id), HGCA_OK) << hgca_last_error();
    }
    int64_t t = 0;
    for (int32_t n : p.n_new) t += n;
    ASSERT_TRUE(cpp->begin_step(p.ids, p.n_new).is_ok());
    ASSERT_EQ(hgca_begin_step(c.rt, p.ids.data(), p.n_new.data(), static_cast<int32_t>(p.ids.size())),
              HGCA_OK)
        << hgca_last_error();
    for (int32_t layer = 0; layer < opt.n_layers; ++layer) {
      // Scaled queries make the weights peaky, so selection really drops entries.
      const auto q = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * hq * d), 2.0), dtype);
      const auto k = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * hkv * d), 2.0), dtype);
      const auto v = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * hkv * d)), dtype);
      std::vector<std::byte> out_cpp(q.size(), std::byte{0x11}), out_c(q.size(), std::byte{0x22});
      std::vector<float> lse_cpp(static_cast<std::size_t>(t * hq), -1.0f), lse_c(lse_cpp.size(), -2.0f);
      const Status s = cpp->attention(layer, {q.data(), dtype, {t, hq, d}}, {k.data(), dtype, {t, hkv, d}},
                                      {v.data(), dtype, {t, hkv, d}}, {out_cpp.data(), dtype, {t, hq, d}},
                                      lse_cpp.data());
      ASSERT_TRUE(s.is_ok()) << s.message();
      // The last layer goes through C without an LSE output (lse_out may be NULL).
      const bool with_lse = layer + 1 < opt.n_layers;
      ASSERT_EQ(hgca_attention(c.rt, layer, t, q.data(), k.data(), v.data(), out_c.data(),
                               with_lse ? lse_c.data() : nullptr, nullptr),
                HGCA_OK)
          << hgca_last_error();
      EXPECT_EQ(out_c, out_cpp) << "layer " << layer;
      if (with_lse) {
        EXPECT_EQ(0, std::memcmp(lse_c.data(), lse_cpp.data(), lse_c.size() * sizeof(float)))
            << "layer " << layer;
      }
    }
    ASSERT_TRUE(cpp->end_step().is_ok());
    ASSERT_EQ(hgca_end_step(c.rt), HGCA_OK) << hgca_last_error();
  }

  // The same state: statistics, lengths and stored KV.
  bool dropped_something = false;
  for (int32_t layer = 0; layer < opt.n_layers; ++layer) {
    LayerStats st;
    ASSERT_TRUE(cpp->layer_stats(layer, &st).is_ok());
    hgca_layer_stats cst;
    std::vector<int64_t> context(static_cast<std::size_t>(hkv), -1);
    ASSERT_EQ(hgca_get_layer_stats(c.rt, layer, &cst, context.data(), hkv), HGCA_OK) << hgca_last_error();
    EXPECT_EQ(cst.sequences, st.sequences);
    EXPECT_EQ(cst.window_tokens, st.window_tokens);
    EXPECT_EQ(cst.window_capacity, st.window_capacity);
    EXPECT_EQ(cst.store_tokens, st.store_tokens);
    EXPECT_EQ(cst.selected_fraction, st.selected_fraction);
    EXPECT_EQ(cst.reevaluations, st.reevaluations);
    EXPECT_EQ(context, st.context_tokens);
    EXPECT_GT(st.store_tokens, 0);
    EXPECT_GT(st.reevaluations, 0);
    dropped_something |= st.selected_fraction < 1.0;
  }
  EXPECT_TRUE(dropped_something) << "the run should exercise sparse selection";
  for (SeqId id : {SeqId{1}, SeqId{3}}) {
    int64_t len = -1, clen = -2;
    ASSERT_TRUE(cpp->sequence_length(id, &len).is_ok());
    ASSERT_EQ(hgca_sequence_length(c.rt, id, &clen), HGCA_OK);
    EXPECT_EQ(clen, len);
    for (int32_t layer = 0; layer < opt.n_layers; ++layer) {
      const std::size_t bytes = static_cast<std::size_t>(len * hkv * d) * dtype_size(dtype);
      std::vector<std::byte> k(bytes), v(bytes), ck(bytes), cv(bytes);
      ASSERT_TRUE(cpp->read_kv(layer, id, k.data(), v.data()).is_ok());
      ASSERT_EQ(hgca_read_kv(c.rt, layer, id, ck.data(), cv.data()), HGCA_OK);
      EXPECT_EQ(ck, k);
      EXPECT_EQ(cv, v);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CApi, CApiBitIdentical, ::testing::Values(DType::kFloat32, DType::kBFloat16),
                         [](const ::testing::TestParamInfo<DType>& param_info) {
                           return std::string(to_string(param_info.param));
                         });

// --- errors ---

TEST(CApi, NullRuntime) {
  const uint64_t id = 1;
  const int32_t n = 1;
  float buf[16] = {};
  hgca_layer_stats st;
  int64_t len = 0;
  expect_error(hgca_add_sequence(nullptr, 1), HGCA_INVALID_ARGUMENT, {"hgca_add_sequence", "runtime is null"});
  expect_error(hgca_release_sequence(nullptr, 1), HGCA_INVALID_ARGUMENT, {"hgca_release_sequence", "runtime"});
  expect_error(hgca_begin_step(nullptr, &id, &n, 1), HGCA_INVALID_ARGUMENT, {"hgca_begin_step", "runtime"});
  expect_error(hgca_attention(nullptr, 0, 1, buf, buf, buf, buf, nullptr, nullptr), HGCA_INVALID_ARGUMENT,
               {"hgca_attention", "runtime"});
  expect_error(hgca_end_step(nullptr), HGCA_INVALID_ARGUMENT, {"hgca_end_step", "runtime"});
  expect_error(hgca_get_layer_stats(nullptr, 0, &st, nullptr, 0), HGCA_INVALID_ARGUMENT,
               {"hgca_get_layer_stats", "runtime"});
  expect_error(hgca_sequence_length(nullptr, 1, &len), HGCA_INVALID_ARGUMENT, {"hgca_sequence_length", "runtime"});
  expect_error(hgca_read_kv(nullptr, 0, 1, buf, buf), HGCA_INVALID_ARGUMENT, {"hgca_read_kv", "runtime"});
  expect_error(hgca_synchronize(nullptr), HGCA_INVALID_ARGUMENT, {"hgca_synchronize", "runtime"});
  hgca_cpu_stats cpu;
  int32_t node = 0;
  expect_error(hgca_get_cpu_stats(nullptr, &cpu, nullptr, 0), HGCA_INVALID_ARGUMENT, {"hgca_get_cpu_stats", "runtime"});
  expect_error(hgca_sequence_node(nullptr, 1, &node), HGCA_INVALID_ARGUMENT, {"hgca_sequence_node", "runtime"});
}

TEST(CApi, CreateErrors) {
  hgca_runtime* rt = nullptr;
  expect_error(hgca_create(nullptr, &rt), HGCA_INVALID_ARGUMENT, {"hgca_create", "options is null"});
  EXPECT_EQ(rt, nullptr);
  hgca_options o = c_options(HGCA_FLOAT32);
  expect_error(hgca_create(&o, nullptr), HGCA_INVALID_ARGUMENT, {"hgca_create", "out is null"});

  o.head_dim = 12;
  expect_error(hgca_create(&o, &rt), HGCA_UNSUPPORTED, {"head_dim = 12"});
  EXPECT_EQ(rt, nullptr);
  o = c_options(HGCA_FLOAT32);
  o.beta = -1.0f;
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"beta = -1"});
  o = c_options(HGCA_FLOAT32);
  o.dtype = static_cast<hgca_dtype>(3);
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"dtype = 3"});
  o = c_options(HGCA_FLOAT32);
  o.backend = static_cast<hgca_backend>(3);
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"backend = 3"});
  o = c_options(HGCA_FLOAT32);
  o.n_kv_heads = 3;
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"n_kv_heads = 3"});
  o = c_options(HGCA_FLOAT32);
  o.staging_limit_bytes = 0;
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"staging_limit_bytes = 0"});
  o = c_options(HGCA_FLOAT32);
  o.deterministic = 7;
  expect_error(hgca_create(&o, &rt), HGCA_INVALID_ARGUMENT, {"deterministic = 7", "0 or 1"});
  EXPECT_EQ(rt, nullptr);
}

TEST(CApi, CallErrors) {
  const hgca_options o = c_options(HGCA_FLOAT32);
  CRuntime r;
  ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK) << hgca_last_error();
  ASSERT_EQ(hgca_add_sequence(r.rt, 1), HGCA_OK);

  // Unknown sequence.
  const uint64_t unknown = 42;
  const int32_t one = 1;
  expect_error(hgca_begin_step(r.rt, &unknown, &one, 1), HGCA_NOT_FOUND, {"seq_ids[0] = 42"});
  expect_error(hgca_release_sequence(r.rt, 42), HGCA_NOT_FOUND, {"seq_id = 42"});
  int64_t len = -5;
  expect_error(hgca_sequence_length(r.rt, 42, &len), HGCA_NOT_FOUND, {"seq_id = 42"});
  EXPECT_EQ(len, -5);
  // A null out is named before the id is looked up.
  expect_error(hgca_sequence_length(r.rt, 42, nullptr), HGCA_INVALID_ARGUMENT, {"out is null"});
  expect_error(hgca_sequence_node(r.rt, 42, nullptr), HGCA_INVALID_ARGUMENT, {"out is null"});
  std::vector<float> kv(1024);
  expect_error(hgca_read_kv(r.rt, 0, 42, kv.data(), kv.data()), HGCA_NOT_FOUND, {"seq_id = 42"});
  expect_error(hgca_add_sequence(r.rt, 1), HGCA_INVALID_ARGUMENT, {"seq_id = 1"});

  // Bad batches.
  expect_error(hgca_begin_step(r.rt, &unknown, &one, -1), HGCA_INVALID_ARGUMENT, {"batch_size = -1"});
  expect_error(hgca_begin_step(r.rt, nullptr, &one, 1), HGCA_INVALID_ARGUMENT, {"seq_ids is null"});
  const uint64_t id = 1;
  expect_error(hgca_begin_step(r.rt, &id, nullptr, 1), HGCA_INVALID_ARGUMENT, {"n_new is null"});
  expect_error(hgca_begin_step(r.rt, nullptr, nullptr, 0), HGCA_INVALID_ARGUMENT, {"batch_size = 0", "expected ≥ 1"});
  expect_error(hgca_end_step(r.rt), HGCA_FAILED_PRECONDITION, {"end_step"});

  // Wrong total_tokens: the step has 2.
  const int32_t two = 2;
  ASSERT_EQ(hgca_begin_step(r.rt, &id, &two, 1), HGCA_OK) << hgca_last_error();
  std::vector<float> q(3 * 4 * 16, 0.5f), k(3 * 2 * 16, 0.25f), v(3 * 2 * 16, 1.0f), out(3 * 4 * 16, -7.0f);
  expect_error(hgca_attention(r.rt, 0, 3, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr),
               HGCA_INVALID_ARGUMENT, {"q.shape = [3, 4, 16]", "[2, 4, 16]", "total_tokens"});
  expect_error(hgca_attention(r.rt, 0, 0, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr),
               HGCA_INVALID_ARGUMENT, {"q.shape = [0, 4, 16]"});
  EXPECT_EQ(out, std::vector<float>(out.size(), -7.0f));  // nothing written
  expect_error(hgca_attention(r.rt, 5, 2, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr),
               HGCA_INVALID_ARGUMENT, {"layer = 5"});
  expect_error(hgca_attention(r.rt, 0, 2, q.data(), nullptr, v.data(), out.data(), nullptr, nullptr),
               HGCA_INVALID_ARGUMENT, {"k.data is null"});
  expect_error(hgca_add_sequence(r.rt, 2), HGCA_FAILED_PRECONDITION, {"step is open"});
  expect_error(hgca_read_kv(r.rt, 0, 1, kv.data(), kv.data()), HGCA_FAILED_PRECONDITION, {"step is open"});

  // The step is still open and completes.
  for (int32_t layer = 0; layer < 2; ++layer) {
    ASSERT_EQ(hgca_attention(r.rt, layer, 2, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr), HGCA_OK)
        << hgca_last_error();
  }
  for (int i = 0; i < 2 * 4 * 16; ++i) ASSERT_FLOAT_EQ(out[i], 1.0f) << i;  // V is all ones
  ASSERT_EQ(hgca_end_step(r.rt), HGCA_OK) << hgca_last_error();
  ASSERT_EQ(hgca_sequence_length(r.rt, 1, &len), HGCA_OK);
  EXPECT_EQ(len, 2);
}

/// Asserts that the last error starts with the C function's name, once: "hgca_read_kv: seq_id = …",
/// never the C++ call's ("read_kv: …") nor both.
void expect_named(hgca_status got, const std::string& function, const std::string& detail) {
  ASSERT_NE(got, HGCA_OK) << function;
  const std::string message = hgca_last_error();
  EXPECT_TRUE(message.starts_with(function + ": ")) << message;
  std::string call = function.substr(std::strlen("hgca_"));  // the C++ call: hgca_get_layer_stats is layer_stats
  if (call.starts_with("get_")) call.erase(0, std::strlen("get_"));
  EXPECT_FALSE(message.substr(function.size() + 2).starts_with(call + ":")) << message;
  EXPECT_THAT(message, HasSubstr(detail));
}

TEST(CApi, ErrorsNameTheCFunction) {
  hgca_options o = c_options(HGCA_FLOAT32);
  hgca_runtime* none = nullptr;
  o.beta = -1.0f;
  expect_named(hgca_create(&o, &none), "hgca_create", "beta = -1");
  o = c_options(HGCA_FLOAT32);
  expect_named(hgca_load_options_json("/nonexistent/tuned.json", &o), "hgca_load_options_json", "/nonexistent/tuned.json");

  CRuntime r;
  ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK) << hgca_last_error();
  ASSERT_EQ(hgca_add_sequence(r.rt, 1), HGCA_OK);
  expect_named(hgca_add_sequence(r.rt, 1), "hgca_add_sequence", "seq_id = 1");
  expect_named(hgca_release_sequence(r.rt, 9), "hgca_release_sequence", "seq_id = 9");
  const uint64_t unknown = 9;
  const int32_t one = 1;
  expect_named(hgca_begin_step(r.rt, &unknown, &one, 1), "hgca_begin_step", "seq_ids[0] = 9");
  std::vector<float> buffer(4 * 16);
  expect_named(hgca_attention(r.rt, 0, 1, buffer.data(), buffer.data(), buffer.data(), buffer.data(), nullptr, nullptr),
               "hgca_attention", "begin_step");
  expect_named(hgca_end_step(r.rt), "hgca_end_step", "no step is open");
  expect_named(hgca_abort_step(r.rt), "hgca_abort_step", "no step is open");
  hgca_layer_stats st;
  expect_named(hgca_get_layer_stats(r.rt, 7, &st, nullptr, 0), "hgca_get_layer_stats", "layer = 7");
  int64_t length = 0;
  expect_named(hgca_sequence_length(r.rt, 9, &length), "hgca_sequence_length", "seq_id = 9");
  int32_t node = 0;
  expect_named(hgca_sequence_node(r.rt, 9, &node), "hgca_sequence_node", "seq_id = 9");
  expect_named(hgca_read_kv(r.rt, 0, 9, buffer.data(), buffer.data()), "hgca_read_kv", "seq_id = 9");
}

TEST(CApi, LastErrorPersistsUntilTheNextFailureAndIsPerThread) {
  const hgca_options o = c_options(HGCA_FLOAT32);
  CRuntime r;
  ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK);
  ASSERT_EQ(hgca_release_sequence(r.rt, 77), HGCA_NOT_FOUND);
  const std::string message = hgca_last_error();
  EXPECT_THAT(message, HasSubstr("seq_id = 77"));
  // A successful call leaves it.
  ASSERT_EQ(hgca_add_sequence(r.rt, 5), HGCA_OK);
  EXPECT_EQ(std::string(hgca_last_error()), message);

  // Another thread has its own: empty until it fails, and its failure is not seen here.
  std::string fresh, other;
  std::thread worker([&] {
    const char* e = hgca_last_error();
    fresh = e ? e : "(null)";
    (void)hgca_release_sequence(r.rt, 88);
    other = hgca_last_error();
  });
  worker.join();
  EXPECT_EQ(fresh, "");
  EXPECT_THAT(other, HasSubstr("seq_id = 88"));
  EXPECT_EQ(std::string(hgca_last_error()), message);
}

TEST(CApi, LayerStatsContextCapacity) {
  const hgca_options o = c_options(HGCA_FLOAT32);
  CRuntime r;
  ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK);
  ASSERT_EQ(hgca_add_sequence(r.rt, 1), HGCA_OK);
  // A prefill past the window, so the store and the context sets are not empty.
  const uint64_t id = 1;
  const int32_t n = 13;
  std::mt19937_64 rng(3);
  ASSERT_EQ(hgca_begin_step(r.rt, &id, &n, 1), HGCA_OK);
  for (int32_t layer = 0; layer < 2; ++layer) {
    const auto q = ref::encode(ref::normal(rng, 13 * 4 * 16), DType::kFloat32);
    const auto k = ref::encode(ref::normal(rng, 13 * 2 * 16), DType::kFloat32);
    const auto v = ref::encode(ref::normal(rng, 13 * 2 * 16), DType::kFloat32);
    std::vector<std::byte> out(q.size());
    ASSERT_EQ(hgca_attention(r.rt, layer, 13, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr), HGCA_OK);
  }
  ASSERT_EQ(hgca_end_step(r.rt), HGCA_OK);

  hgca_layer_stats st;
  std::memset(&st, 0x5A, sizeof st);
  const hgca_layer_stats untouched = st;
  int64_t context[2] = {-3, -3};
  expect_error(hgca_get_layer_stats(r.rt, 0, &st, context, 1), HGCA_INVALID_ARGUMENT,
               {"context_tokens_capacity = 1", "n_kv_heads = 2"});
  expect_error(hgca_get_layer_stats(r.rt, 0, &st, context, 0), HGCA_INVALID_ARGUMENT,
               {"context_tokens_capacity = 0"});
  EXPECT_EQ(context[0], -3);
  EXPECT_EQ(context[1], -3);
  EXPECT_EQ(0, std::memcmp(&st, &untouched, sizeof st));
  expect_error(hgca_get_layer_stats(r.rt, 0, nullptr, nullptr, 0), HGCA_INVALID_ARGUMENT, {"out is null"});
  expect_error(hgca_get_layer_stats(r.rt, 2, &st, nullptr, 0), HGCA_INVALID_ARGUMENT, {"layer = 2"});

  // NULL context_tokens needs no capacity; a big enough buffer gets n_kv_heads entries, no more.
  ASSERT_EQ(hgca_get_layer_stats(r.rt, 0, &st, nullptr, 0), HGCA_OK) << hgca_last_error();
  EXPECT_EQ(st.sequences, 1);
  EXPECT_EQ(st.window_capacity, 8);
  EXPECT_EQ(st.window_tokens + st.store_tokens, 13);
  EXPECT_GT(st.store_tokens, 0);
  int64_t big[4] = {-3, -3, -3, -3};
  ASSERT_EQ(hgca_get_layer_stats(r.rt, 0, &st, big, 4), HGCA_OK) << hgca_last_error();
  EXPECT_GT(big[0], 0);
  EXPECT_LE(big[0], st.store_tokens);
  EXPECT_GT(big[1], 0);
  EXPECT_LE(big[1], st.store_tokens);
  EXPECT_EQ(big[2], -3);
  EXPECT_EQ(big[3], -3);
  EXPECT_DOUBLE_EQ(st.selected_fraction, static_cast<double>(big[0] + big[1]) / (2.0 * static_cast<double>(st.store_tokens)));
}

TEST(CApi, ReadKvReturnsWhatWentIn) {
  for (hgca_dtype cdtype : {HGCA_FLOAT32, HGCA_FLOAT16, HGCA_BFLOAT16}) {
    const auto dtype = static_cast<DType>(cdtype);
    SCOPED_TRACE(to_string(dtype));
    const hgca_options o = c_options(cdtype);
    CRuntime r;
    ASSERT_EQ(hgca_create(&o, &r.rt), HGCA_OK);
    ASSERT_EQ(hgca_add_sequence(r.rt, 10), HGCA_OK);
    ASSERT_EQ(hgca_add_sequence(r.rt, 20), HGCA_OK);
    const std::size_t row = 2 * 16 * dtype_size(dtype);  // one token's K: [Hkv, D]
    std::vector<std::byte> hist_k[2][2], hist_v[2][2];      // [sequence][layer]
    std::mt19937_64 rng(5);
    const uint64_t ids[2] = {10, 20};
    const std::vector<std::array<int32_t, 2>> steps = {{9, 2}, {1, 1}, {5, 7}, {1, 1}, {3, 1}};
    for (const auto& n_new : steps) {
      const int64_t t = n_new[0] + n_new[1];
      ASSERT_EQ(hgca_begin_step(r.rt, ids, n_new.data(), 2), HGCA_OK) << hgca_last_error();
      for (int32_t layer = 0; layer < 2; ++layer) {
        const auto q = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * 4 * 16)), dtype);
        const auto k = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * 2 * 16)), dtype);
        const auto v = ref::encode(ref::normal(rng, static_cast<std::size_t>(t * 2 * 16)), dtype);
        std::vector<std::byte> out(q.size());
        ASSERT_EQ(hgca_attention(r.rt, layer, t, q.data(), k.data(), v.data(), out.data(), nullptr, nullptr), HGCA_OK)
            << hgca_last_error();
        const auto split = k.begin() + static_cast<std::ptrdiff_t>(n_new[0] * row);
        hist_k[0][layer].insert(hist_k[0][layer].end(), k.begin(), split);
        hist_k[1][layer].insert(hist_k[1][layer].end(), split, k.end());
        const auto vsplit = v.begin() + static_cast<std::ptrdiff_t>(n_new[0] * row);
        hist_v[0][layer].insert(hist_v[0][layer].end(), v.begin(), vsplit);
        hist_v[1][layer].insert(hist_v[1][layer].end(), vsplit, v.end());
      }
      ASSERT_EQ(hgca_end_step(r.rt), HGCA_OK) << hgca_last_error();
    }
    for (int s = 0; s < 2; ++s) {
      int64_t len = -1;
      ASSERT_EQ(hgca_sequence_length(r.rt, ids[s], &len), HGCA_OK);
      EXPECT_EQ(static_cast<std::size_t>(len) * row, hist_k[s][0].size());
      for (int32_t layer = 0; layer < 2; ++layer) {
        std::vector<std::byte> k(hist_k[s][layer].size()), v(k.size());
        ASSERT_EQ(hgca_read_kv(r.rt, layer, ids[s], k.data(), v.data()), HGCA_OK) << hgca_last_error();
        EXPECT_EQ(k, hist_k[s][layer]) << "sequence " << ids[s] << " layer " << layer;
        EXPECT_EQ(v, hist_v[s][layer]) << "sequence " << ids[s] << " layer " << layer;
      }
    }
  }
}

TEST(CApi, SmokeFromC) {
  const int failed_line = hgca_test_c_smoke();
  EXPECT_EQ(failed_line, 0) << "the check at test_c_header.c:" << failed_line << " failed; last error: "
                            << hgca_last_error();
}

}  // namespace
}  // namespace hgca
