// LD_PRELOAD: on std::terminate, print the stack (where the exception left a noexcept frame); on
// SIGUSR1, print every thread's stack (each thread answers SIGUSR2), for a process that hangs.
#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

static void print_stack(const char* title) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  char line[96];
  const int len = std::snprintf(line, sizeof(line), "%s: thread %ld\n", title, static_cast<long>(syscall(SYS_gettid)));
  write(2, line, static_cast<size_t>(len));
  backtrace_symbols_fd(frames, n, 2);
}
static void on_terminate() {
  print_stack("terminate");
  std::abort();
}
static void on_usr2(int) { print_stack("stack"); }
static void on_usr1(int) {
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      const long tid = std::atol(e->d_name);
      if (tid > 0) {
        syscall(SYS_tgkill, getpid(), tid, SIGUSR2);
        usleep(20000);  // one thread's stack at a time
      }
    }
    closedir(d);
  }
}
__attribute__((constructor)) static void install() {
  std::set_terminate(on_terminate);
  signal(SIGUSR1, on_usr1);
  signal(SIGUSR2, on_usr2);
}
