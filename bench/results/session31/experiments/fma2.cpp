// Session 31: one core's 512-bit FMA and vdpbf16ps rate, on one vCPU and on both at once.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
// 12 independent chains per iteration, in registers (inline asm): FMA or vdpbf16ps throughput.
double run(long iters, int kind) {
  auto t0 = std::chrono::steady_clock::now();
  if (kind == 0) {
    asm volatile(
        "vxorps %%zmm0,%%zmm0,%%zmm0\n vxorps %%zmm1,%%zmm1,%%zmm1\n vxorps %%zmm2,%%zmm2,%%zmm2\n vxorps %%zmm3,%%zmm3,%%zmm3\n"
        "vxorps %%zmm4,%%zmm4,%%zmm4\n vxorps %%zmm5,%%zmm5,%%zmm5\n vxorps %%zmm6,%%zmm6,%%zmm6\n vxorps %%zmm7,%%zmm7,%%zmm7\n"
        "vxorps %%zmm8,%%zmm8,%%zmm8\n vxorps %%zmm9,%%zmm9,%%zmm9\n vxorps %%zmm10,%%zmm10,%%zmm10\n vxorps %%zmm11,%%zmm11,%%zmm11\n"
        "vxorps %%zmm12,%%zmm12,%%zmm12\n vxorps %%zmm13,%%zmm13,%%zmm13\n"
        "1:\n"
        "vfmadd231ps %%zmm12,%%zmm13,%%zmm0\n vfmadd231ps %%zmm12,%%zmm13,%%zmm1\n vfmadd231ps %%zmm12,%%zmm13,%%zmm2\n vfmadd231ps %%zmm12,%%zmm13,%%zmm3\n"
        "vfmadd231ps %%zmm12,%%zmm13,%%zmm4\n vfmadd231ps %%zmm12,%%zmm13,%%zmm5\n vfmadd231ps %%zmm12,%%zmm13,%%zmm6\n vfmadd231ps %%zmm12,%%zmm13,%%zmm7\n"
        "vfmadd231ps %%zmm12,%%zmm13,%%zmm8\n vfmadd231ps %%zmm12,%%zmm13,%%zmm9\n vfmadd231ps %%zmm12,%%zmm13,%%zmm10\n vfmadd231ps %%zmm12,%%zmm13,%%zmm11\n"
        "dec %0\n jnz 1b\n" : "+r"(iters) :: "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","cc");
  } else {
    asm volatile(
        "vxorps %%zmm0,%%zmm0,%%zmm0\n vxorps %%zmm1,%%zmm1,%%zmm1\n vxorps %%zmm2,%%zmm2,%%zmm2\n vxorps %%zmm3,%%zmm3,%%zmm3\n"
        "vxorps %%zmm4,%%zmm4,%%zmm4\n vxorps %%zmm5,%%zmm5,%%zmm5\n vxorps %%zmm6,%%zmm6,%%zmm6\n vxorps %%zmm7,%%zmm7,%%zmm7\n"
        "vxorps %%zmm8,%%zmm8,%%zmm8\n vxorps %%zmm9,%%zmm9,%%zmm9\n vxorps %%zmm10,%%zmm10,%%zmm10\n vxorps %%zmm11,%%zmm11,%%zmm11\n"
        "vxorps %%zmm12,%%zmm12,%%zmm12\n vxorps %%zmm13,%%zmm13,%%zmm13\n"
        "1:\n"
        "vdpbf16ps %%zmm12,%%zmm13,%%zmm0\n vdpbf16ps %%zmm12,%%zmm13,%%zmm1\n vdpbf16ps %%zmm12,%%zmm13,%%zmm2\n vdpbf16ps %%zmm12,%%zmm13,%%zmm3\n"
        "vdpbf16ps %%zmm12,%%zmm13,%%zmm4\n vdpbf16ps %%zmm12,%%zmm13,%%zmm5\n vdpbf16ps %%zmm12,%%zmm13,%%zmm6\n vdpbf16ps %%zmm12,%%zmm13,%%zmm7\n"
        "vdpbf16ps %%zmm12,%%zmm13,%%zmm8\n vdpbf16ps %%zmm12,%%zmm13,%%zmm9\n vdpbf16ps %%zmm12,%%zmm13,%%zmm10\n vdpbf16ps %%zmm12,%%zmm13,%%zmm11\n"
        "dec %0\n jnz 1b\n" : "+r"(iters) :: "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","cc");
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
int main() {
  const long n = 300000000;
  for (int kind = 0; kind < 2; ++kind)
    for (int r = 0; r < 3; ++r) {
      double one = 12.0 * n / run(n, kind);
      std::vector<double> two(2);
      std::thread t([&] { two[1] = 12.0 * n / run(n, kind); });
      two[0] = 12.0 * n / run(n, kind);
      t.join();
      std::printf("%s: one thread %.2f G/s; two threads %.2f + %.2f G/s\n", kind ? "vdpbf16ps zmm" : "vfmadd231ps zmm", one / 1e9, two[0] / 1e9, two[1] / 1e9);
    }
}
