// Microbenchmark: one unit kernel call over n keys resident in L1/L2/L3, cycles (at the measured clock) per key.
#define HGCA_HAVE_AVX2_KERNELS 1
#define HGCA_HAVE_AVX512_KERNELS 1
#define HGCA_HAVE_AVX512BF16_KERNELS 1
#define HGCA_HAVE_AMX_KERNELS 1
#include <sys/syscall.h>
#include <unistd.h>
#include "cpu/arch/sparse_arch.hpp"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using namespace hgca::cpu::arch;
int main(int argc, char** argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 256;
  int isa = argc > 2 ? atoi(argv[2]) : 1;
  int dt = argc > 3 ? atoi(argv[3]) : 2;  // 1 fp16, 2 bf16
  double ghz = argc > 4 ? atof(argv[4]) : 3.4;
  const int G = 4, D = 128;
  std::vector<uint16_t> k(n * D), v(n * D), q(G * D);
  srand(1);
  for (auto& x : k) x = dt == 2 ? (0x3c00 + rand() % 0x300) : (0x3000 + rand() % 0x800);
  for (auto& x : v) x = dt == 2 ? (0x3c00 + rand() % 0x300) : (0x3000 + rand() % 0x800);
  for (auto& x : q) x = dt == 2 ? (0x3c00 + rand() % 0x300) : (0x3000 + rand() % 0x800);
  std::vector<float> o(G * D), lse(G);
  KvRun run{k.data(), v.data(), n};
  UnitParams p;
  p.n = n; p.runs = &run; p.n_runs = 1; p.q = q.data(); p.q_row_stride = G * D; p.group = G; p.head_dim = D;
  p.sm_scale = 0.088f; p.o = o.data(); p.o_row_stride = G * D; p.lse = lse.data(); p.lse_row_stride = G;
  if (isa == 5) syscall(SYS_arch_prctl, 0x1023, 18);
  Kernels ks = isa == 5 ? amx_kernels() : isa == 4 ? avx512bf16_kernels() : isa == 2 ? avx2_kernels() : avx512_kernels();
  UnitKernel f = dt == 2 ? ks.bf16 : ks.f16;
  int64_t reps = std::max<int64_t>(1, 200000000 / (n * 100));
  for (int i = 0; i < 3; ++i) f(p);
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < reps; ++i) f(p);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    best = std::min(best, s);
  }
  printf("n=%ld isa=%d dt=%d: %.1f ns/key = %.1f cycles/key at %.2f GHz, %.1f GB/s (o0=%g)\n", (long)n, isa, dt,
         best / n * 1e9, best / n * ghz * 1e9, ghz, n * D * 4 / best / 1e9, o[0]);
}
