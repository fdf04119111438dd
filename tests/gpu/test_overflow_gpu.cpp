// The CUDA backend's overflow policy end to end: with overflow = always every non-empty context
// set is attended by the GPU, reading it from the store memory, and the outputs equal the fp64
// reference (beta = 0: exact attention) and the CPU path (overflow = off, real selection) within
// the stated tolerances, over decode, long appends, GQA 1–8, ragged batches and empty stores; with
// auto and rates that make the CPU slow, decode moves some items and not others, the statistics
// say so, and the outputs still match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "harness.hpp"

namespace hgca {
namespace {

struct Case {
  int32_t hq, hkv, d;
  DType dtype;
};

std::string name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(to_string(c.dtype)) + "_hq" + std::to_string(c.hq) + "_hkv" + std::to_string(c.hkv) + "_d" +
         std::to_string(c.d);
}

/// bf16 4e-3, fp16 5e-4, fp32 1e-5 relative (the output's rounding, DESIGN.md's tolerances).
double tolerance(DType dt) { return dt == DType::kBFloat16 ? 4e-3 : dt == DType::kFloat16 ? 5e-4 : 1e-5; }

Options policy_options(const Case& c, OverflowMode mode) {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = c.hq;
  o.n_kv_heads = c.hkv;
  o.head_dim = c.d;
  o.dtype = c.dtype;
  o.window_blocks = 3;
  o.block_tokens = 4;  // W = 12: stores fill after a few steps
  o.beta = 0.0f;
  o.min_keep = 0;
  o.reeval_min_tokens = 5;
  o.deterministic = true;
  o.threads = 2;
  o.overflow = mode;
  return o;
}

/// n_new for a step: decode mostly, appends of up to 20 rows, one of 37 (> W) now and then.
std::vector<int32_t> ragged_step(std::mt19937_64& rng, std::size_t batch, int step) {
  std::vector<int32_t> n_new;
  for (std::size_t i = 0; i < batch; ++i) {
    const int kind = static_cast<int>(rng() % 6);
    n_new.push_back(step % 9 == 4 && i == 0 ? 37 : kind == 0 ? 1 + static_cast<int32_t>(rng() % 20) : kind == 1 ? 5 : 1);
  }
  return n_new;
}

LayerStats sum_stats(Runtime& rt, int32_t layers) {
  LayerStats sum;
  for (int32_t l = 0; l < layers; ++l) {
    LayerStats st;
    EXPECT_TRUE(rt.layer_stats(l, &st).is_ok());
    sum.overflow_calls += st.overflow_calls;
    sum.overflow_items += st.overflow_items;
    sum.overflow_bytes += st.overflow_bytes;
    sum.overflow_rows += st.overflow_rows;
    sum.store_tokens += st.store_tokens;
  }
  return sum;
}

class CudaOverflowAlways : public ::testing::TestWithParam<Case> {};

// beta = 0: window ∪ S is the whole history, so the GPU's sparse part plus the window must be exact
// attention. Sequences join (empty stores) and leave mid-run.
TEST_P(CudaOverflowAlways, ExactAttentionWithEveryContextSetOnTheGpu) {
  const Case c = GetParam();
  const Options o = policy_options(c, OverflowMode::kAlways);
  test::Harness h(o, 42);
  ASSERT_EQ(h.runtime().backend(), Backend::kCuda);
  std::mt19937_64 rng(7);
  std::vector<SeqId> live;
  SeqId next = 100;
  auto add = [&] { h.add(next); live.push_back(next++); };
  add();
  add();
  add();
  for (int step = 0; step < 30; ++step) {
    if (step == 10) {
      h.release(live[1]);
      live.erase(live.begin() + 1);
      add();  // its store is empty: its items stay empty on both sides
    }
    const auto results = h.step(live, ragged_step(rng, live.size(), step), 1.5);
    ASSERT_NO_FATAL_FAILURE(test::check_against_reference(results, tolerance(c.dtype), step));
  }
  const LayerStats st = sum_stats(h.runtime(), o.n_layers);
  EXPECT_GT(st.store_tokens, 0);
  EXPECT_GT(st.overflow_calls, 0);
  EXPECT_GT(st.overflow_items, 0);
  EXPECT_GT(st.overflow_bytes, 0);
  EXPECT_GE(st.overflow_rows, st.overflow_items);
}

// GQA 1, 2, 4, 8 (and MHA), head dims 8 to 200 (40, 120, 200: no kernel's whole vector width),
// every dtype.
INSTANTIATE_TEST_SUITE_P(Shapes, CudaOverflowAlways,
                         ::testing::Values(Case{4, 4, 8, DType::kFloat32}, Case{4, 2, 64, DType::kFloat32},
                                           Case{8, 2, 64, DType::kBFloat16}, Case{8, 1, 128, DType::kFloat16},
                                           Case{16, 2, 64, DType::kFloat32}, Case{2, 2, 128, DType::kBFloat16},
                                           Case{8, 2, 40, DType::kBFloat16}, Case{4, 1, 120, DType::kFloat16},
                                           Case{2, 1, 200, DType::kFloat32}),
                         name);

/// Runs the same steps (same seeds) on two runtimes whose options differ only in the policy, checks
/// every layer's outputs against each other, then `check_b` on the second runtime.
void expect_same_outputs(const Options& a_opt, const Options& b_opt, int steps, uint64_t seed,
                         const std::function<void(Runtime&)>& check_b) {
  test::Harness a(a_opt, seed), b(b_opt, seed);
  std::mt19937_64 rng(seed);
  const std::vector<SeqId> ids{1, 2, 3, 4};
  for (SeqId id : ids) {
    a.add(id);
    b.add(id);
  }
  for (int step = 0; step < steps; ++step) {
    // A prompt longer than the window first, then mostly decode.
    const std::vector<int32_t> n_new = step == 0 ? std::vector<int32_t>{40, 23, 3, 31} : ragged_step(rng, ids.size(), step);
    const auto ra = a.step(ids, n_new, 1.5);
    const auto rb = b.step(ids, n_new, 1.5);
    for (std::size_t l = 0; l < ra.size(); ++l) {
      for (double x : rb[l].out) ASSERT_FALSE(std::isnan(x));
      ASSERT_LE(ref::relative_error(rb[l].out, ra[l].out), tolerance(a_opt.dtype)) << "step " << step << " layer " << l;
      ASSERT_LE(ref::worst_row_error(rb[l].out, ra[l].out, a_opt.head_dim), 2 * tolerance(a_opt.dtype))
          << "step " << step << " layer " << l << ": one (token, head) row";
      ASSERT_EQ(rb[l].lse.size(), ra[l].lse.size());
      for (std::size_t i = 0; i < ra[l].lse.size(); ++i) {
        ASSERT_NEAR(rb[l].lse[i], ra[l].lse[i], 1e-5 * std::max(1.0, std::abs(static_cast<double>(ra[l].lse[i]))))
            << "step " << step << " layer " << l << " row " << i;
      }
    }
  }
  check_b(b.runtime());
}

// Real selection (beta = 1): the GPU attends the same context sets the CPU would have.
TEST(CudaOverflow, AlwaysEqualsTheCpuPath) {
  for (DType dt : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    Options off = policy_options({8, 2, 64, dt}, OverflowMode::kOff);
    off.beta = 1.0f;
    off.min_keep = 3;
    Options always = off;
    always.overflow = OverflowMode::kAlways;
    expect_same_outputs(off, always, 25, 5, [&](Runtime& rt) {
      const LayerStats st = sum_stats(rt, off.n_layers);
      EXPECT_GT(st.overflow_items, 0) << to_string(dt);
    });
  }
}

// auto with a CPU rate that makes the CPU the longer part: decode steps move some items to the GPU
// (not all: the GPU's part grows with each), the statistics show it, and the outputs equal the CPU
// path's. With the policy off nothing is counted.
TEST(CudaOverflow, AutoMovesSomeDecodeItemsWhenTheCpuIsSlow) {
  Options off = policy_options({8, 2, 64, DType::kFloat32}, OverflowMode::kOff);
  off.beta = 1.0f;
  off.min_keep = 3;
  Options autom = off;
  autom.overflow = OverflowMode::kAuto;
  // An item of a few KB costs milliseconds on either side, so the fixed 20 µs of moving anything
  // and the window do not decide; the gather and the CPU cost about the same per byte.
  autom.overflow_cpu_gbps = 0.002;
  autom.overflow_h2d_gbps = 0.002;
  autom.overflow_margin = 0.05;
  expect_same_outputs(off, autom, 25, 11, [&](Runtime& rt) {
    for (int32_t l = 0; l < autom.n_layers; ++l) {
      LayerStats st;
      ASSERT_TRUE(rt.layer_stats(l, &st).is_ok());
      EXPECT_GT(st.overflow_calls, 0) << "layer " << l;
      EXPECT_GT(st.overflow_items, 0) << "layer " << l;
      // 4 sequences × 2 KV heads per call: moving every item of every call would not balance.
      EXPECT_LT(st.overflow_items, 8 * st.overflow_calls) << "layer " << l;
      EXPECT_GT(st.overflow_bytes, 0) << "layer " << l;
      EXPECT_GT(st.overflow_predicted_cpu_seconds, 0.0) << "layer " << l;
      EXPECT_GT(st.overflow_predicted_gpu_seconds, 0.0) << "layer " << l;
    }
  });
  test::Harness h(off, 3);
  h.add(1);
  for (int step = 0; step < 20; ++step) h.step({1}, {step == 0 ? 30 : 1});
  const LayerStats st = sum_stats(h.runtime(), off.n_layers);
  EXPECT_EQ(st.overflow_calls, 0);
  EXPECT_EQ(st.overflow_items, 0);
}

TEST(CudaOverflow, AlwaysIsRefusedBeyondGroupEight) {
  Options o = policy_options({16, 1, 64, DType::kFloat32}, OverflowMode::kAlways);
  o.backend = Backend::kCuda;
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("overflow = always"), std::string::npos) << s.message();
  o.overflow = OverflowMode::kAuto;  // auto leaves such a model on the CPU
  EXPECT_TRUE(Runtime::create(o, &rt).is_ok());
}

}  // namespace
}  // namespace hgca
