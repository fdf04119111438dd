// Session 31: q·k scores for 4 queries over 16-key blocks (bf16, D 128), K in L1: (a) the engine's
// layout (one accumulator per key and query, transposed reduction) against (b) queries packed in
// 128-bit lanes with K chunks broadcast (one accumulator per key).
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <vector>
static inline __m512 reduce_w(const __m512* x) {
  __m512 a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i) a[i] = _mm512_add_ps(_mm512_unpacklo_ps(x[2*i], x[2*i+1]), _mm512_unpackhi_ps(x[2*i], x[2*i+1]));
  for (int i = 0; i < 4; ++i) {
    __m512d lo = _mm512_unpacklo_pd(_mm512_castps_pd(a[2*i]), _mm512_castps_pd(a[2*i+1]));
    __m512d hi = _mm512_unpackhi_pd(_mm512_castps_pd(a[2*i]), _mm512_castps_pd(a[2*i+1]));
    b[i] = _mm512_add_ps(_mm512_castpd_ps(lo), _mm512_castpd_ps(hi));
  }
  for (int i = 0; i < 2; ++i) c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2*i], b[2*i+1], 0x88), _mm512_shuffle_f32x4(b[2*i], b[2*i+1], 0xdd));
  return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88), _mm512_shuffle_f32x4(c[0], c[1], 0xdd));
}
__attribute__((noinline)) void scores_a(const uint16_t* k, const uint16_t* q, int nblocks, float* out) {
  __m512 qr[4][4];
  for (int j = 0; j < 4; ++j) for (int c = 0; c < 4; ++c) qr[j][c] = _mm512_castsi512_ps(_mm512_loadu_si512(q + j * 128 + c * 32));
  for (int b = 0; b < nblocks; ++b) {
    alignas(64) __m512 red[4][16];
    for (int t = 0; t < 16; t += 2) {
      __m512 acc[2][4];
      for (int u = 0; u < 2; ++u) for (int j = 0; j < 4; ++j) acc[u][j] = _mm512_setzero_ps();
      for (int c = 0; c < 4; ++c) {
        __m512bh kp[2];
        for (int u = 0; u < 2; ++u) kp[u] = (__m512bh)_mm512_loadu_si512(k + (t + u) * 128 + c * 32);
        for (int j = 0; j < 4; ++j) for (int u = 0; u < 2; ++u) acc[u][j] = _mm512_dpbf16_ps(acc[u][j], (__m512bh)qr[j][c], kp[u]);
      }
      for (int u = 0; u < 2; ++u) for (int j = 0; j < 4; ++j) red[j][t + u] = acc[u][j];
    }
    for (int j = 0; j < 4; ++j) _mm512_storeu_ps(out + j * 16, reduce_w(red[j]));
    asm volatile("" ::: "memory");
  }
}
// Queries packed: qp[c] (c = 0..15) = [q0 dims 8c..8c+7 | q1 ... | q2 ... | q3 ...] as bf16 pairs.
__attribute__((noinline)) void scores_b(const uint16_t* k, const uint16_t* qpk, int nblocks, float* out) {
  __m512bh qp[16];
  for (int c = 0; c < 16; ++c) qp[c] = (__m512bh)_mm512_loadu_si512(qpk + c * 32);
  for (int b = 0; b < nblocks; ++b) {
    __m512 z[4];  // per group of 4 keys: lane q = query q's 4 scores
    for (int g = 0; g < 4; ++g) {
      __m512 acc[4];
      for (int u = 0; u < 4; ++u) {
        const uint16_t* kr = k + (4 * g + u) * 128;
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        for (int c = 0; c < 16; c += 2) {
          a0 = _mm512_dpbf16_ps(a0, qp[c], (__m512bh)_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)(kr + c * 8))));
          a1 = _mm512_dpbf16_ps(a1, qp[c + 1], (__m512bh)_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)(kr + c * 8 + 8))));
        }
        acc[u] = _mm512_add_ps(a0, a1);
      }
      // lane q of acc[u]: 4 partials of key 4g+u → lane q of z[g]: keys 4g..4g+3
      __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(acc[0], acc[1]), _mm512_unpackhi_ps(acc[0], acc[1]));
      __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(acc[2], acc[3]), _mm512_unpackhi_ps(acc[2], acc[3]));
      z[g] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(s01), _mm512_castps_pd(s23))),
                           _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(s01), _mm512_castps_pd(s23))));
    }
    // 4x4 transpose of 128-bit lanes: out[q] = lane q of z[0..3]
    __m512 t0 = _mm512_shuffle_f32x4(z[0], z[1], 0x44), t1 = _mm512_shuffle_f32x4(z[0], z[1], 0xee);
    __m512 t2 = _mm512_shuffle_f32x4(z[2], z[3], 0x44), t3 = _mm512_shuffle_f32x4(z[2], z[3], 0xee);
    _mm512_storeu_ps(out + 0, _mm512_shuffle_f32x4(t0, t2, 0x88));
    _mm512_storeu_ps(out + 16, _mm512_shuffle_f32x4(t0, t2, 0xdd));
    _mm512_storeu_ps(out + 32, _mm512_shuffle_f32x4(t1, t3, 0x88));
    _mm512_storeu_ps(out + 48, _mm512_shuffle_f32x4(t1, t3, 0xdd));
    asm volatile("" ::: "memory");
  }
}
static float bf(uint16_t x) { uint32_t u = uint32_t(x) << 16; float f; memcpy(&f, &u, 4); return f; }
int main() {
  std::vector<uint16_t> k(16 * 128), q(4 * 128), qp(16 * 32);
  uint32_t s = 1;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; float f = ((s >> 8) & 0xffff) / 65536.0f - 0.5f; uint32_t u; memcpy(&u, &f, 4); return uint16_t(u >> 16); };
  for (auto& x : k) x = rnd();
  for (auto& x : q) x = rnd();
  for (int c = 0; c < 16; ++c) for (int j = 0; j < 4; ++j) for (int e = 0; e < 8; ++e) qp[c * 32 + j * 8 + e] = q[j * 128 + c * 8 + e];
  float oa[64], ob[64];
  scores_a(k.data(), q.data(), 1, oa);
  scores_b(k.data(), qp.data(), 1, ob);
  double maxerr = 0;
  for (int j = 0; j < 4; ++j) for (int t = 0; t < 16; ++t) {
    double ref = 0; for (int e = 0; e < 128; ++e) ref += double(bf(q[j * 128 + e])) * bf(k[t * 128 + e]);
    maxerr = fmax(maxerr, fmax(fabs(oa[j * 16 + t] - ref), fabs(ob[j * 16 + t] - ref)));
  }
  printf("max abs err vs fp64: %.2e\n", maxerr);
  const int n = 2000000;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now(); scores_a(k.data(), q.data(), n, oa);
    auto t1 = std::chrono::steady_clock::now(); scores_b(k.data(), qp.data(), n, ob);
    auto t2 = std::chrono::steady_clock::now();
    double ca = std::chrono::duration<double>(t1 - t0).count() * 3.64e9 / (16.0 * n), cb = std::chrono::duration<double>(t2 - t1).count() * 3.64e9 / (16.0 * n);
    printf("cycles/key @3.64GHz: engine layout %.1f, packed queries %.1f\n", ca, cb);
  }
}
