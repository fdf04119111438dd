// Running a tool of ours as a user would, for the tests of its command line.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "hgca/hgca.h"

namespace hgca::test {

/// Runs `command` in the shell; its stdout, and its wait status in *status.
inline std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  *status = pclose(pipe);
  return out;
}

/// Each (flags, expected) case: `exe flags` fails, and what it prints contains `expected`.
inline void expect_refused(const std::string& exe, const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [flags, expected] : cases) {
    int status = -1;
    const std::string text = run(exe + " " + flags + " 2>&1", &status);
    EXPECT_NE(status, 0) << flags;
    EXPECT_NE(text.find(expected), std::string::npos) << flags << ": " << text;
  }
}

/// `exe --version` prints "<name> <hgca.h's version>" alone on stdout and exits 0.
inline void expect_version(const std::string& exe, const std::string& name) {
  int status = -1;
  const std::string text = run(exe + " --version", &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(text, name + " " + std::to_string(HGCA_VERSION_MAJOR) + "." + std::to_string(HGCA_VERSION_MINOR) + "." +
                      std::to_string(HGCA_VERSION_PATCH) + "\n");
}

}  // namespace hgca::test
