// hgca/dtype.hpp stands alone (included first) and its conversions agree with the fp64 reference.
#include "hgca/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "reference/reference.hpp"

namespace hgca {
namespace {

TEST(DtypeHeader, BulkConversionsRoundLikeTheReference) {
  std::mt19937_64 rng(21);
  auto values = ref::normal(rng, 2048, 30.0);
  values.insert(values.end(), {0.0, 1e-7, -7e-6, 70000.0, -1e30});
  const std::vector<float> src(values.begin(), values.end());
  for (DType dt : {DType::kBFloat16, DType::kFloat16}) {
    std::vector<uint16_t> bits(src.size());
    convert_from_float(dt, src, bits.data());
    std::vector<float> back(src.size());
    convert_to_float(dt, bits.data(), back);
    const auto expect = ref::round_to(std::vector<double>(src.begin(), src.end()), dt);
    for (std::size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(back[i], static_cast<float>(expect[i])) << to_string(dt) << " " << src[i];
    }
  }
}

// Values exactly halfway between two neighbours go to the even one (random inputs hold almost no
// ties: rounding half away from zero passed the test above). Expected bits written out by hand.
TEST(DtypeHeader, TiesRoundToEven) {
  const float e8 = std::ldexp(1.0f, -8), e11 = std::ldexp(1.0f, -11), e25 = std::ldexp(1.0f, -25);
  const std::pair<float, uint16_t> bf16[] = {
      {1.0f + e8, 0x3F80},      {1.0f + 3 * e8, 0x3F82}, {-(1.0f + e8), 0xBF80},
      {-(1.0f + 3 * e8), 0xBF82}, {256.0f + 1.0f, 0x4380}, {256.0f + 3.0f, 0x4382}};
  // The fp64 reference's own rounding (every test's inputs go through it) as well.
  auto reference = [](float x, DType dt) { return static_cast<float>(ref::round_to(std::vector<double>{x}, dt)[0]); };
  for (const auto& [x, bits] : bf16) {
    EXPECT_EQ(float_to_bf16(x), bits) << "bf16 of " << x;
    EXPECT_EQ(reference(x, DType::kBFloat16), bf16_to_float(bits)) << "reference bf16 of " << x;
  }
  const std::pair<float, uint16_t> fp16[] = {
      {1.0f + e11, 0x3C00},  {1.0f + 3 * e11, 0x3C02}, {-(1.0f + e11), 0xBC00},
      {e25, 0x0000},         {3 * e25, 0x0002},        {-3 * e25, 0x8002},  // subnormal
      {65520.0f, 0x7C00},    {65504.0f, 0x7BFF}};                         // 65520: halfway to inf
  for (const auto& [x, bits] : fp16) {
    EXPECT_EQ(float_to_fp16(x), bits) << "fp16 of " << x;
    EXPECT_EQ(reference(x, DType::kFloat16), fp16_to_float(bits)) << "reference fp16 of " << x;
  }
}

}  // namespace
}  // namespace hgca
