// The tools' output: messages on stderr that cannot end a run, and stdout checked at the end.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace hgca::tools {

/// Prints to stderr, ignoring a failed write: fmt::print throws where stderr is closed or full,
/// and a progress line or a message about a run must not abort it.
template <typename... Args>
void eprint(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    std::fwrite(text.data(), 1, text.size(), stderr);
  } catch (...) {  // no memory for the message: nothing to print it with either
  }
}

/// Flushes stdout; where what was printed did not all arrive (a full disk, a closed pipe), says so
/// on stderr and returns 1, else `status`.
inline int finish_stdout(const char* tool, int status) noexcept {
  const int flush_error = std::fflush(stdout) != 0 ? errno : 0;
  if (flush_error != 0 || std::ferror(stdout)) {
    eprint("{}: error: writing the output to stdout failed ({})\n", tool,
           flush_error != 0 ? std::strerror(flush_error) : "a write error");
    return 1;
  }
  return status;
}

}  // namespace hgca::tools
