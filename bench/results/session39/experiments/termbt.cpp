// LD_PRELOAD: on std::terminate, print the stack (where the exception left a noexcept frame).
#include <execinfo.h>
#include <cstdio>
#include <cstdlib>
#include <exception>
static void handler() {
  void* frames[64];
  const int n = backtrace(frames, 64);
  std::fputs("terminate: backtrace\n", stderr);
  backtrace_symbols_fd(frames, n, 2);
  std::abort();
}
__attribute__((constructor)) static void install() { std::set_terminate(handler); }
