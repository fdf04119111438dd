// hgca/dtype.hpp stands alone (included first) and its conversions agree with the fp64 reference.
#include "hgca/dtype.hpp"

#include <gtest/gtest.h>

#include <random>
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

}  // namespace
}  // namespace hgca
