// Read patterns at 2 threads: one stream vs K/V alternating in 4 KiB chunks (the engine's pattern).
#include <immintrin.h>
#include <pthread.h>
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>

static __m512 sum_range(const char* p, size_t bytes, __m512 a) {
  __m512 a0 = a, a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  for (size_t i = 0; i < bytes; i += 256) {
    a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
    a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 64));
    a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 128));
    a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 192));
  }
  return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}
volatile float sink;
// mode 0: one stream over 2*half; mode 1: K/V alternating chunks of `chunk` bytes; mode 2: as 1 + prefetch next chunks (t1)
static void work(const char* base, size_t half, int mode, size_t chunk) {
  __m512 a = _mm512_setzero_ps();
  if (mode == 0) a = sum_range(base, 2 * half, a);
  else {
    const char* k = base; const char* v = base + half;
    for (size_t off = 0; off < half; off += chunk) {
      if (mode == 2 && off + chunk < half) {
        for (size_t j = 0; j < chunk; j += 64) { __builtin_prefetch(k + off + chunk + j, 0, 2); __builtin_prefetch(v + off + chunk + j, 0, 2); }
      }
      a = sum_range(k + off, chunk, a);
      a = sum_range(v + off, chunk, a);
    }
  }
  sink = _mm512_reduce_add_ps(a);
}
int main(int argc, char** argv) {
  const int threads = 2;
  const size_t per = size_t{1} << 30;  // per thread
  std::vector<char*> bufs;
  for (int t = 0; t < threads; ++t) {
    char* p = static_cast<char*>(aligned_alloc(2 << 20, per));
    madvise(p, per, MADV_HUGEPAGE);
    for (size_t i = 0; i < per; i += 64) std::memset(p + i, (int)(i >> 6) & 0x3f, 64);
    bufs.push_back(p);
  }
  const size_t chunk = argc > 1 ? strtoul(argv[1], nullptr, 0) : 4096;
  const char* names[] = {"one stream", "K/V alternating", "K/V alternating + prefetch"};
  for (int round = 0; round < 5; ++round) {
    for (int mode = 0; mode < 3; ++mode) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> th;
      for (int t = 0; t < threads; ++t) th.emplace_back([&, t] {
        cpu_set_t s; CPU_ZERO(&s); CPU_SET(t, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s);
        work(bufs[t], per / 2, mode, chunk); });
      for (auto& x : th) x.join();
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      printf("round %d %-28s %.1f GB/s\n", round, names[mode], threads * per / dt * 1e-9);
    }
  }
}
