/* LD_PRELOAD for HgcaDecode.InterruptEndsTheProgressLineBeforeALibrarysHandler: a library that takes
 * SIGINT's handler before hgca-decode draws a bar (as LLVM did, loaded by hwloc's OpenCL plugin
 * through pocl). Its handler says so and exits 3. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void library_handler(int sig) {
  (void)sig;
  static const char said[] = "library handler\n";
  (void)!write(STDERR_FILENO, said, sizeof said - 1);
  _exit(3);
}

__attribute__((constructor)) static void take_sigint(void) {
  struct sigaction on;
  memset(&on, 0, sizeof on);
  on.sa_handler = library_handler;
  sigemptyset(&on.sa_mask);
  sigaction(SIGINT, &on, NULL);
}
