// The public C++ header compiles on its own (it is included first, before anything else), and the
// small things it declares behave as documented: enum names, dtype sizes, Options' defaults.
#include "hgca/hgca.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <type_traits>

namespace hgca {
namespace {

TEST(Headers, StatusCodeNames) {
  EXPECT_STREQ(to_string(StatusCode::kOk), "ok");
  EXPECT_STREQ(to_string(StatusCode::kInvalidArgument), "invalid argument");
  EXPECT_STREQ(to_string(StatusCode::kNotFound), "not found");
  EXPECT_STREQ(to_string(StatusCode::kFailedPrecondition), "failed precondition");
  EXPECT_STREQ(to_string(StatusCode::kOutOfMemory), "out of memory");
  EXPECT_STREQ(to_string(StatusCode::kUnsupported), "unsupported");
  EXPECT_STREQ(to_string(StatusCode::kInternal), "internal error");
  // A value outside the enum still gets a printable name, never null.
  const char* unknown = to_string(static_cast<StatusCode>(99));
  ASSERT_NE(unknown, nullptr);
  EXPECT_GT(std::string(unknown).size(), 0u);
}

TEST(Headers, StatusCodeValuesAreStable) {
  // The C ABI mirrors these numbers; they must not move.
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kOk), 0);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kInvalidArgument), 1);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kNotFound), 2);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kFailedPrecondition), 3);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kOutOfMemory), 4);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kUnsupported), 5);
  EXPECT_EQ(static_cast<int32_t>(StatusCode::kInternal), 6);
}

TEST(Headers, DTypeNamesAndSizes) {
  EXPECT_STREQ(to_string(DType::kFloat32), "f32");
  EXPECT_STREQ(to_string(DType::kFloat16), "f16");
  EXPECT_STREQ(to_string(DType::kBFloat16), "bf16");
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  const char* unknown = to_string(static_cast<DType>(42));
  ASSERT_NE(unknown, nullptr);
  EXPECT_GT(std::string(unknown).size(), 0u);
}

TEST(Headers, BackendNames) {
  EXPECT_STREQ(to_string(Backend::kAuto), "auto");
  EXPECT_STREQ(to_string(Backend::kHost), "host");
  EXPECT_STREQ(to_string(Backend::kCuda), "cuda");
  const char* unknown = to_string(static_cast<Backend>(-1));
  ASSERT_NE(unknown, nullptr);
  EXPECT_GT(std::string(unknown).size(), 0u);
}

TEST(Headers, NamesAreDistinct) {
  std::set<std::string> codes;
  for (int c = 0; c <= 6; ++c) codes.insert(to_string(static_cast<StatusCode>(c)));
  EXPECT_EQ(codes.size(), 7u);
  const std::set<std::string> dtypes{to_string(DType::kFloat32), to_string(DType::kFloat16),
                                     to_string(DType::kBFloat16)};
  EXPECT_EQ(dtypes.size(), 3u);
  const std::set<std::string> backends{to_string(Backend::kAuto), to_string(Backend::kHost),
                                       to_string(Backend::kCuda)};
  EXPECT_EQ(backends.size(), 3u);
}

TEST(Headers, OptionsDefaultsAsDocumented) {
  const Options o;
  // Model shape has no default: it must be set.
  EXPECT_EQ(o.n_layers, 0);
  EXPECT_EQ(o.n_q_heads, 0);
  EXPECT_EQ(o.n_kv_heads, 0);
  EXPECT_EQ(o.head_dim, 0);
  EXPECT_EQ(o.dtype, DType::kBFloat16);
  EXPECT_EQ(o.sm_scale, 0.0f);  // 0 means 1/sqrt(head_dim)
  // The method.
  EXPECT_EQ(o.window_blocks, 16);
  EXPECT_EQ(o.block_tokens, 64);
  EXPECT_EQ(o.alpha, 0.1f);
  EXPECT_EQ(o.beta, 1.0f);
  EXPECT_EQ(o.min_keep, 4);
  EXPECT_EQ(o.reeval_min_tokens, 16);
  EXPECT_EQ(o.heads_per_task, 1);
  // Execution.
  EXPECT_EQ(o.backend, Backend::kAuto);
  EXPECT_EQ(o.threads, 0);
  EXPECT_FALSE(o.deterministic);
  EXPECT_EQ(o.handoff, HostHandoff::kAuto);
  // CPU engine tuning.
  EXPECT_EQ(o.threads_per_node, 0);
  EXPECT_EQ(o.kv_split_tokens, 0);
  EXPECT_EQ(o.max_packed_heads, 0);
  EXPECT_EQ(o.isa, CpuIsa::kAuto);
  EXPECT_EQ(o.numa_placement, NumaPlacement::kAuto);
}

TEST(Headers, DefaultOptionsAreRejectedUntilTheShapeIsSet) {
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(Options{}, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("n_layers = 0"), std::string::npos) << s.message();
  EXPECT_EQ(rt, nullptr);
}

TEST(Headers, StatusAndViewDefaults) {
  const Status ok;
  EXPECT_TRUE(ok.is_ok());
  EXPECT_TRUE(static_cast<bool>(ok));
  EXPECT_EQ(ok.code(), StatusCode::kOk);
  EXPECT_TRUE(ok.message().empty());
  EXPECT_TRUE(Status::ok().is_ok());
  const Status bad(StatusCode::kNotFound, "seq_id = 3 is unknown");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(bad.code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.message(), "seq_id = 3 is unknown");

  const TensorView t;
  EXPECT_EQ(t.data, nullptr);
  EXPECT_EQ(t.dtype, DType::kBFloat16);
  EXPECT_EQ(t.shape, (std::array<int64_t, 3>{0, 0, 0}));
  const MutableTensorView m;
  EXPECT_EQ(m.data, nullptr);
  EXPECT_EQ(m.dtype, DType::kBFloat16);
  EXPECT_EQ(m.shape, (std::array<int64_t, 3>{0, 0, 0}));

  const LayerStats st;
  EXPECT_EQ(st.sequences, 0);
  EXPECT_EQ(st.window_tokens, 0);
  EXPECT_EQ(st.window_capacity, 0);
  EXPECT_EQ(st.store_tokens, 0);
  EXPECT_TRUE(st.context_tokens.empty());
  EXPECT_EQ(st.selected_fraction, 0.0);
  EXPECT_EQ(st.reevaluations, 0);
}

TEST(Headers, BuildInfoIsConsistent) {
  const int n = cuda_device_count();
  EXPECT_GE(n, 0);
  if (!built_with_cuda()) {
    EXPECT_EQ(n, 0);
  }
}

static_assert(std::is_abstract_v<Runtime>);
static_assert(std::has_virtual_destructor_v<Runtime>);
static_assert(std::is_same_v<std::underlying_type_t<DType>, int32_t>);
static_assert(std::is_same_v<std::underlying_type_t<Backend>, int32_t>);
static_assert(std::is_same_v<std::underlying_type_t<StatusCode>, int32_t>);

}  // namespace
}  // namespace hgca
