// The tools' shared flag validators (tools/common/cli.hpp): what they accept is the value the flag
// gets, in decimal, and what they refuse is named with what was expected.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.hpp"

namespace {

/// Parses `--n <text>` into an int32 flag checked by `check`; the value, or the error's text.
template <class T>
std::string parse_flag(const CLI::Validator& check, const std::string& text, T* value) {
  CLI::App app{"test", "test"};
  app.add_option("--n", *value)->transform(check);
  std::vector<std::string> args = {text, "--n"};  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

TEST(ToolCli, IntegersAreDecimalAndInRange) {
  const auto check = hgca::tools::integer_in<int32_t>(0, 100);
  int32_t v = -1;
  EXPECT_EQ(parse_flag(check, "010", &v), "");
  EXPECT_EQ(v, 10);  // not octal 8
  EXPECT_EQ(parse_flag(check, "08", &v), "");
  EXPECT_EQ(v, 8);
  EXPECT_EQ(parse_flag(check, "100", &v), "");
  EXPECT_EQ(v, 100);
  for (const char* bad : {"101", "-1", "1.5", "0x10", "+5", " 5", "abc", ""}) {
    EXPECT_EQ(parse_flag(check, bad, &v), std::string("--n: expected an integer from 0 to 100, got ") + bad) << bad;
  }
  const auto any = hgca::tools::integer<int32_t>();
  EXPECT_EQ(parse_flag(any, "1.5", &v), "--n: expected an integer, got 1.5");
  EXPECT_EQ(parse_flag(any, "99999999999", &v), "--n: expected an integer from -2147483648 to 2147483647, got 99999999999");
  uint64_t u = 0;
  EXPECT_EQ(parse_flag(hgca::tools::integer<uint64_t>(), "-1", &u),
            "--n: expected an integer from 0 to 18446744073709551615, got -1");
}

TEST(ToolCli, NumbersAreFiniteAndInRange) {
  double v = 0;
  EXPECT_EQ(parse_flag(hgca::tools::number_in(0.0, 1.0), "0.25", &v), "");
  EXPECT_EQ(v, 0.25);
  EXPECT_EQ(parse_flag(hgca::tools::number_in(0.0, 1.0), "1.5", &v), "--n: expected a number from 0 to 1, got 1.5");
  for (const char* bad : {"nan", "inf", "0x10", "fast"}) {
    EXPECT_EQ(parse_flag(hgca::tools::number(), bad, &v), std::string("--n: expected a finite number, got ") + bad);
  }
}

// A float flag refuses what a float would read as 0 or infinity, and keeps what it holds.
TEST(ToolCli, FloatFlagsRefuseWhatAFloatCannotHold) {
  float f = -1;
  const auto check = hgca::tools::number<float>();
  EXPECT_EQ(parse_flag(check, "1e-40", &f), "");  // subnormal, not 0
  EXPECT_GT(f, 0.0f);
  EXPECT_EQ(parse_flag(check, "0", &f), "");
  EXPECT_EQ(f, 0.0f);
  for (const char* bad : {"1e-50", "-1e-50", "1e39", "-3.5e38"}) {
    EXPECT_EQ(parse_flag(check, bad, &f),
              std::string("--n: expected a finite number that a float holds (0, or magnitudes from 1.4e-45 to 3.4e+38), got ") + bad)
        << bad;
  }
  double d = 0;
  EXPECT_EQ(parse_flag(hgca::tools::number(), "1e-50", &d), "");  // a double holds it
  EXPECT_EQ(d, 1e-50);
}

}  // namespace
