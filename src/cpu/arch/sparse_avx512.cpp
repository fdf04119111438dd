// The sparse attention kernels for AVX-512 (F, BW, VL, DQ): 16 lanes, fp16 widened by vcvtph2ps,
// bf16 by a 16-bit shift, masked loads for head dims that are not a multiple of 16. The BF16/FP16
// extensions are not used here: their dot products round the query to 16 bits; not compiling with
// them keeps this path runnable on AVX-512 CPUs without AVX512-FP16 (e.g. AMD Zen 4). For bf16 KV the
// bf16 query is exact, and sparse_avx512bf16.cpp uses vdpbf16ps for q·k.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "dtype.hpp"

// sparse_avx512bf16.cpp compiles this file again with HGCA_AVX512_BF16 (and -mavx512bf16).
#if defined(HGCA_AVX512_BF16)
#define HGCA_ARCH_NS avx512bf16
#else
#define HGCA_ARCH_NS avx512
#endif
#include "cpu/arch/sparse_kernel.hpp"

namespace hgca::cpu::arch {
namespace HGCA_ARCH_NS {

struct Avx512 {
  static constexpr int W = 16;
  static constexpr int kRegs = 32;
  using V = __m512;
  using fp16 = detail::fp16_t;
  using bf16 = detail::bf16_t;

  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V x) { _mm512_storeu_ps(p, x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static float hsum(V x) { return _mm512_reduce_add_ps(x); }
  /// The 16 horizontal sums of x[0..15], in order, by pairwise interleave-and-add (46 instructions).
  static V reduce_w(const V* x) {
    V a[8], b[4], c[2];
    for (int i = 0; i < 8; ++i) {  // per 128-bit lane: [t0 t1 t0 t1] partial sums
      a[i] = _mm512_add_ps(_mm512_unpacklo_ps(x[2 * i], x[2 * i + 1]), _mm512_unpackhi_ps(x[2 * i], x[2 * i + 1]));
    }
    for (int i = 0; i < 4; ++i) {  // per 128-bit lane: [t0 t1 t2 t3]
      const __m512d lo = _mm512_unpacklo_pd(_mm512_castps_pd(a[2 * i]), _mm512_castps_pd(a[2 * i + 1]));
      const __m512d hi = _mm512_unpackhi_pd(_mm512_castps_pd(a[2 * i]), _mm512_castps_pd(a[2 * i + 1]));
      b[i] = _mm512_add_ps(_mm512_castpd_ps(lo), _mm512_castpd_ps(hi));
    }
    for (int i = 0; i < 2; ++i) {  // across 128-bit lanes
      c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  static float hmax(V x) { return _mm512_reduce_max_ps(x); }
  static bool any_above(V x, float t) { return _mm512_cmp_ps_mask(x, _mm512_set1_ps(t), _CMP_GT_OQ) != 0; }

  /// 2^x for x < 127.5 (the kernel passes ≤ 16; -inf → 0): 2^round(x) × p(x − round(x)), p the degree-7 Taylor polynomial (rel. error < 1e-7).
  static V exp2(V x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-160.0f));
    const V fl = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V f = _mm512_sub_ps(x, fl);
    V p = _mm512_set1_ps(1.525273380405984e-5f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.5403530393381606e-4f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3333558146428443e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618129107628477e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550410866482158e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402265069591007e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931471805599453e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, fl);
  }

  static float to_float(float x) { return x; }
  static float to_float(bf16 x) {
    uint32_t u = uint32_t{x.bits} << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static float to_float(fp16 x) { return _cvtsh_ss(x.bits); }

#if defined(HGCA_AVX512_BF16)
  /// bf16 K rows are dotted with bf16 queries by vdpbf16ps (products exact, sums in fp32), 32
  /// elements per instruction and no widening; V still widens to fp32 (weights stay fp32).
  template <class T>
  static constexpr bool kDotBf16 = std::is_same_v<T, bf16>;
  using Bf16Pairs = __m512bh;
  static Bf16Pairs load_bf16_pairs(const bf16* p, int32_t remaining) {
    const __m512i x = remaining >= 32 ? _mm512_loadu_si512(p)
                                      : _mm512_maskz_loadu_epi16((1u << remaining) - 1, p);
    return reinterpret_cast<const __m512bh&>(x);
  }
  static V dot_bf16(V acc, V q_pairs, Bf16Pairs k) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<const __m512bh&>(q_pairs), k);
  }
#else
  template <class T>
  static constexpr bool kDotBf16 = false;
  using Bf16Pairs = int;
  static Bf16Pairs load_bf16_pairs(const bf16*, int32_t) { return 0; }
  static V dot_bf16(V acc, V, Bf16Pairs) { return acc; }
#endif

  /// bf16 widened two halves at a time: even elements by a 16-bit shift, odd ones by a mask.
  template <class T>
  static constexpr bool kInterleaved = std::is_same_v<T, bf16>;
  static V load_half_interleaved(const bf16* p, int half, int32_t rem) {
    const __m512i x = rem >= 32 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16((1u << rem) - 1, p);
    return _mm512_castsi512_ps(half == 0 ? _mm512_slli_epi32(x, 16)
                                         : _mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }

  template <class T>
  static V load_kv(const T* p) {
    if constexpr (sizeof(T) == 4) {
      return _mm512_loadu_ps(p);
    } else {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      if constexpr (std::is_same_v<T, fp16>) return _mm512_cvtph_ps(h);
      else return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
  }
  template <class T>
  static V load_kv_tail(const T* p, int32_t n) {
    const auto mask = static_cast<__mmask16>((1u << n) - 1);
    if constexpr (sizeof(T) == 4) {
      return _mm512_maskz_loadu_ps(mask, p);
    } else {
      const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
      if constexpr (std::is_same_v<T, fp16>) return _mm512_cvtph_ps(h);
      else return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
  }
};

}  // namespace HGCA_ARCH_NS

#if defined(HGCA_AVX512_BF16)
Kernels avx512bf16_kernels() { return avx512bf16::kernels<avx512bf16::Avx512>(); }
#else
Kernels avx512_kernels() { return avx512::kernels<avx512::Avx512>(); }
#endif

}  // namespace hgca::cpu::arch
