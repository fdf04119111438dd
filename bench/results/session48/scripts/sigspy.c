// LD_PRELOAD: logs every sigaction/signal call for SIGINT with its caller's backtrace (to stderr).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void trace(const char* what, int sig, void* h) {
  char buf[128];
  int n = snprintf(buf, sizeof buf, "SIGSPY %s(%d) handler %p\n", what, sig, h);
  write(2, buf, n);
  void* frames[12];
  int k = backtrace(frames, 12);
  backtrace_symbols_fd(frames, k, 2);
}
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  static int (*real)(int, const struct sigaction*, struct sigaction*);
  if (!real) real = dlsym(RTLD_NEXT, "sigaction");
  if (sig == SIGINT && act) trace("sigaction", sig, (void*)act->sa_handler);
  return real(sig, act, old);
}
sighandler_t signal(int sig, sighandler_t h) {
  static sighandler_t (*real)(int, sighandler_t);
  if (!real) real = dlsym(RTLD_NEXT, "signal");
  if (sig == SIGINT) trace("signal", sig, (void*)h);
  return real(sig, h);
}
