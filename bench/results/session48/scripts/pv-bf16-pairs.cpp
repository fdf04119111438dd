// Session 48: p·v of a decode step (G 4, D 128, bf16 V, 16 keys from L1), fp32 weights with widened V (A,
// as the engine) against bf16 weight pairs through vdpbf16ps with two keys' V interleaved (B). Not kept:
// B rounds the softmax weights to bf16. Built with g++ -O3 -march=native -std=c++20 (needs AVX512-BF16).
// p·v micro-benchmark: G=4 heads, D=128, bf16 V, blocks of 16 keys from L1. A: fp32 weights (V widened
// by shift/and, p broadcast per key). B: bf16 weight pairs with vdpbf16ps (two keys' V interleaved).
#include <immintrin.h>
#include <x86intrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
constexpr int G = 4, D = 128, KB = 16;
__attribute__((noinline)) void pv_a(const uint16_t* v, const float* p /*G x KB*/, __m512* out /*G x 8*/) {
  for (int half = 0; half < 2; ++half) {
    __m512 acc[G][4];
    for (int g = 0; g < G; ++g) for (int j = 0; j < 4; ++j) acc[g][j] = out[g * 8 + half * 4 + j];
    for (int k = 0; k < KB; ++k) {
      const uint16_t* row = v + k * D + half * 64;
      __m512 w[G];
      for (int g = 0; g < G; ++g) w[g] = _mm512_set1_ps(p[g * KB + k]);
      for (int c = 0; c < 2; ++c) {
        __m512i x = _mm512_loadu_si512(row + c * 32);
        __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
        __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(0xFFFF0000u)));
        for (int g = 0; g < G; ++g) {
          acc[g][2 * c] = _mm512_fmadd_ps(w[g], even, acc[g][2 * c]);
          acc[g][2 * c + 1] = _mm512_fmadd_ps(w[g], odd, acc[g][2 * c + 1]);
        }
      }
    }
    for (int g = 0; g < G; ++g) for (int j = 0; j < 4; ++j) out[g * 8 + half * 4 + j] = acc[g][j];
  }
}
__attribute__((noinline)) void pv_b(const uint16_t* v, const float* p, __m512* out) {
  __m512i pp[G];
  for (int g = 0; g < G; ++g) {
    __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(p + g * KB));  // 8 pairs (keys 2j, 2j+1)
    pp[g] = _mm512_castsi256_si512((__m256i)h);
  }
  for (int half = 0; half < 2; ++half) {
    __m512 acc[G][4];
    for (int g = 0; g < G; ++g) for (int j = 0; j < 4; ++j) acc[g][j] = out[g * 8 + half * 4 + j];
    for (int k = 0; k < KB; k += 2) {
      const uint16_t* r0 = v + k * D + half * 64;
      const uint16_t* r1 = r0 + D;
      __m512i w[G];
      for (int g = 0; g < G; ++g) w[g] = _mm512_permutexvar_epi32(_mm512_set1_epi32(k / 2), pp[g]);
      for (int c = 0; c < 2; ++c) {
        __m512i a = _mm512_loadu_si512(r0 + c * 32), b = _mm512_loadu_si512(r1 + c * 32);
        __m512i lo = _mm512_unpacklo_epi16(a, b), hi = _mm512_unpackhi_epi16(a, b);
        for (int g = 0; g < G; ++g) {
          acc[g][2 * c] = _mm512_dpbf16_ps(acc[g][2 * c], (__m512bh)w[g], (__m512bh)lo);
          acc[g][2 * c + 1] = _mm512_dpbf16_ps(acc[g][2 * c + 1], (__m512bh)w[g], (__m512bh)hi);
        }
      }
    }
    for (int g = 0; g < G; ++g) for (int j = 0; j < 4; ++j) out[g * 8 + half * 4 + j] = acc[g][j];
  }
}
int main() {
  std::vector<uint16_t> v(KB * D);
  for (size_t i = 0; i < v.size(); ++i) { float f = (i % 97) * 0.01f; uint32_t u; memcpy(&u, &f, 4); v[i] = u >> 16; }
  std::vector<float> p(G * KB);
  for (size_t i = 0; i < p.size(); ++i) p[i] = 0.01f * (i % 13);
  alignas(64) __m512 acc[G * 8];
  for (auto f : {pv_a, pv_b}) {
    for (auto& a : acc) a = _mm512_setzero_ps();
    const int reps = 2000000;
    auto t0 = std::chrono::steady_clock::now(); uint64_t c0 = __rdtsc();
    for (int r = 0; r < reps; ++r) { f(v.data(), p.data(), acc); asm volatile("" ::: "memory"); }
    uint64_t c1 = __rdtsc(); auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(reps) * KB);
    float s = 0; for (auto& a : acc) s += _mm512_reduce_add_ps(a);
    printf("%s: %.2f ns/key, %.1f tsc/key (sum %g)\n", f == pv_a ? "A fp32" : "B bf16 pairs", ns, double(c1 - c0) / (double(reps) * KB), s);
  }
}
