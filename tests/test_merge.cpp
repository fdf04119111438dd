// The LSE merge against the fp64 reference, including empty sides and far-apart LSEs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dtype.hpp"
#include "merge/merge_host.hpp"
#include "reference/reference.hpp"

namespace hgca {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct MergeCase {
  float lse_a, lse_b;
};

// Merges one row of head_dim 8 in fp32 and returns (out, lse).
std::pair<std::vector<float>, float> merge_row(const std::vector<float>& a, float lse_a,
                                               const std::vector<float>& b, float lse_b) {
  std::vector<float> out(a.size(), std::nanf(""));
  float lse = std::nanf("");
  merge::merge_states(a.data(), &lse_a, b.data(), &lse_b, 1, static_cast<int32_t>(a.size()),
                      out.data(), &lse);
  return {out, lse};
}

TEST(Merge, MatchesReferenceOverManyRows) {
  std::mt19937_64 rng(7);
  const int64_t rows = 257;
  const int32_t d = 64;
  auto oa = ref::normal(rng, rows * d), ob = ref::normal(rng, rows * d);
  auto la = ref::normal(rng, rows, 5.0), lb = ref::normal(rng, rows, 5.0);
  std::vector<float> fa(oa.begin(), oa.end()), fb(ob.begin(), ob.end()), fla(la.begin(), la.end()),
      flb(lb.begin(), lb.end()), out(rows * d, std::nanf("")), lse(rows, std::nanf(""));
  merge::merge_states(fa.data(), fla.data(), fb.data(), flb.data(), rows, d, out.data(), lse.data());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> a(fa.begin() + r * d, fa.begin() + (r + 1) * d), b(fb.begin() + r * d, fb.begin() + (r + 1) * d);
    std::vector<double> expect;
    double expect_lse;
    ref::merge(a, fla[r], b, flb[r], expect, expect_lse);
    std::vector<double> got(out.begin() + r * d, out.begin() + (r + 1) * d);
    EXPECT_LE(ref::relative_error(got, expect), 1e-6) << "row " << r;
    EXPECT_NEAR(lse[r], expect_lse, 1e-5 * std::max(1.0, std::abs(expect_lse))) << "row " << r;
  }
}

TEST(Merge, EmptySideReturnsTheOtherUnchanged) {
  const std::vector<float> a{1, -2, 3, 4, 5, 6, 7, 8}, b{9, 9, 9, 9, 9, 9, 9, 9};
  auto [out, lse] = merge_row(a, 3.5f, b, -kInf);
  EXPECT_EQ(out, a);
  EXPECT_EQ(lse, 3.5f);
  std::tie(out, lse) = merge_row(b, -kInf, a, -1.25f);
  EXPECT_EQ(out, a);
  EXPECT_EQ(lse, -1.25f);
}

TEST(Merge, EmptySideIgnoresNonFiniteGarbageInItsOutput) {
  const std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> garbage(8, std::nanf(""));
  garbage[0] = kInf;
  auto [out, lse] = merge_row(a, 0.5f, garbage, -kInf);
  EXPECT_EQ(out, a);
  EXPECT_EQ(lse, 0.5f);
}

TEST(Merge, BothEmptyGiveZeroAndMinusInfinity) {
  const std::vector<float> a(8, 1.0f), b(8, 2.0f);
  auto [out, lse] = merge_row(a, -kInf, b, -kInf);
  EXPECT_EQ(out, std::vector<float>(8, 0.0f));
  EXPECT_EQ(lse, -kInf);
}

TEST(Merge, VeryDifferentLsesNeverOverflowOrGiveNan) {
  const std::vector<float> a{1, 1, 1, 1, 1, 1, 1, 1}, b{-1, -1, -1, -1, -1, -1, -1, -1};
  for (const MergeCase c : {MergeCase{1000.0f, -1000.0f}, MergeCase{-1000.0f, 1000.0f},
                            MergeCase{88.0f, 89.0f}, MergeCase{-200.0f, -201.0f},
                            MergeCase{3.0e38f, 0.0f}}) {
    auto [out, lse] = merge_row(a, c.lse_a, b, c.lse_b);
    std::vector<double> expect;
    double expect_lse;
    ref::merge({a.begin(), a.end()}, c.lse_a, {b.begin(), b.end()}, c.lse_b, expect, expect_lse);
    for (std::size_t i = 0; i < out.size(); ++i) {
      ASSERT_FALSE(std::isnan(out[i]));
      EXPECT_NEAR(out[i], expect[i], 1e-6) << c.lse_a << " vs " << c.lse_b;
    }
    EXPECT_FALSE(std::isnan(lse));
    EXPECT_NEAR(lse, expect_lse, 1e-6 * std::abs(expect_lse) + 1e-6);
  }
}

TEST(Merge, WritesSixteenBitOutputsRounded) {
  const std::vector<float> a{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f}, b(8, -0.3f);
  const float la = 0.7f, lb = -0.2f;
  std::vector<double> expect;
  double expect_lse;
  ref::merge({a.begin(), a.end()}, la, {b.begin(), b.end()}, lb, expect, expect_lse);
  std::vector<detail::bf16_t> out(8);
  merge::merge_states(a.data(), &la, b.data(), &lb, 1, 8, out.data(), nullptr);
  // Rounded to nearest (as the reference rounds), not truncated: a whole ulp off fails.
  const std::vector<double> bf16 = ref::round_to(expect, DType::kBFloat16), fp16 = ref::round_to(expect, DType::kFloat16);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(detail::to_float(out[i]), bf16[i]) << "element " << i << ": " << expect[i];
  std::vector<detail::fp16_t> out16(8);
  merge::merge_states(a.data(), &la, b.data(), &lb, 1, 8, out16.data(), nullptr);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(detail::to_float(out16[i]), fp16[i]) << "element " << i << ": " << expect[i];
}

TEST(Dtype, ConversionsRoundToNearestEvenLikeTheReference) {
  std::mt19937_64 rng(3);
  auto values = ref::normal(rng, 4096, 100.0);
  values.insert(values.end(), {0.0, -0.0, 65504.0, 65520.0, 1e-8, 6.1e-5, 5.96e-8, -3.0e-6});
  for (DType dt : {DType::kBFloat16, DType::kFloat16}) {
    const auto expect = ref::round_to(values, dt);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto x = static_cast<float>(values[i]);
      const float got = dt == DType::kBFloat16 ? detail::to_float(detail::from_float<detail::bf16_t>(x))
                                               : detail::to_float(detail::from_float<detail::fp16_t>(x));
      EXPECT_EQ(got, static_cast<float>(expect[i])) << to_string(dt) << " " << values[i];
    }
  }
}

}  // namespace
}  // namespace hgca
