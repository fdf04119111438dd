// hgca-decode's command line end to end: a tiny synthetic run prints the promised JSON, and values
// it cannot use end the run before it starts, with the flag and the value named.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  *status = pclose(pipe);
  return out;
}

TEST(HgcaDecode, TinySyntheticRunPrintsItsJson) {
  int status = -1;
  const std::string text = run(std::string(HGCA_DECODE_EXE) +
                                   " --backend host --layers 2 --context 192 --chunk 64 --decode-steps 3 --json 2>/dev/null",
                               &status);
  ASSERT_EQ(status, 0) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("backend"), "host");
  EXPECT_EQ(j.at("tbt_ms").size(), 3u);
  EXPECT_EQ(j.at("prefill_steps"), 3);
  EXPECT_GT(j.at("tokens_per_s").get<double>(), 0.0);
}

TEST(HgcaDecode, ValuesItCannotUseAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--layers 0", "--layers: Value 0 not in range 1 to 2147483647"},
      {"--decode-steps -1", "--decode-steps: Value -1 not in range 0 to 2147483647"},
      {"--seed -1", "--seed: Value -1 is not an integer in [0, 18446744073709551615]"},
      {"--seed 99999999999999999999999", "--seed: Value 99999999999999999999999 is not an integer"},
      {"--backend host --handoff poll", "--handoff poll needs the CUDA backend"},
      // Sizes the machine cannot hold, refused up front (before 2^31 tokens wrapped the step count).
      {"--backend host --context 2000000000 --chunk 2000000000 --decode-steps 0", "--chunk 2000000000"},
      {"--backend host --context 2000000000", "--context 2000000000"},
      {"--backend host --q-heads 2000000000 --kv-heads 1", "--q-heads 2000000000"},
  };
  for (const auto& [flags, expected] : cases) {
    int status = -1;
    const std::string text = run(std::string(HGCA_DECODE_EXE) + " " + flags + " 2>&1", &status);
    EXPECT_NE(status, 0) << flags;
    EXPECT_NE(text.find(expected), std::string::npos) << flags << ": " << text;
  }
}

}  // namespace
