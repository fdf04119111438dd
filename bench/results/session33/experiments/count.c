// Session 33: counts malloc and realloc calls by caller (4 frames) while hgca_count_on(1) is set; writes /tmp/mc.txt at exit
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <pthread.h>
static void* (*real_malloc)(size_t);
static void* (*real_realloc)(void*, size_t);
static __thread int in_hook;
#define N 4096
static struct { void* a[4]; long n; long bytes; } tab[N];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int on;
static void rec(size_t sz) {
  if (in_hook || !atomic_load(&on)) return;
  in_hook = 1;
  void* bt[6]; int k = backtrace(bt, 6);
  void* key[4] = {0};
  for (int i = 0; i < 4 && i + 2 < k; ++i) key[i] = bt[i + 2];
  unsigned long h = ((unsigned long)key[0] ^ (unsigned long)key[1] * 31 ^ (unsigned long)key[2] * 131) % N;
  pthread_mutex_lock(&mu);
  for (int p = 0; p < N; ++p) { int i = (h + p) % N;
    if (tab[i].n == 0 || !memcmp(tab[i].a, key, sizeof key)) { memcpy(tab[i].a, key, sizeof key); tab[i].n++; tab[i].bytes += sz; break; } }
  pthread_mutex_unlock(&mu);
  in_hook = 0;
}
void hgca_count_on(int v) { atomic_store(&on, v); }
void* malloc(size_t s) { if (!real_malloc) real_malloc = dlsym(RTLD_NEXT, "malloc"); rec(s); return real_malloc(s); }
void* realloc(void* p, size_t s) { if (!real_realloc) real_realloc = dlsym(RTLD_NEXT, "realloc"); rec(s); return real_realloc(p, s); }
__attribute__((destructor)) static void dump(void) {
  atomic_store(&on, 0);
  FILE* f = fopen("/tmp/mc.txt", "w");
  for (int i = 0; i < N; ++i) if (tab[i].n) {
    fprintf(f, "%ld %ld", tab[i].n, tab[i].bytes);
    for (int j = 0; j < 4; ++j) { Dl_info d; if (tab[i].a[j] && dladdr(tab[i].a[j], &d)) fprintf(f, " %s+0x%lx", d.dli_fname, (unsigned long)((char*)tab[i].a[j] - (char*)d.dli_fbase)); else fprintf(f, " ?"); }
    fprintf(f, "\n"); }
  fclose(f);
}
