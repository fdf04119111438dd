// The sparse attention kernels for AVX2 + FMA + F16C: 8 lanes, fp16 widened by vcvtph2ps, bf16 by a
// 16-bit shift (head dims are multiples of 8, so rows never end inside a vector).
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "dtype.hpp"

#define HGCA_ARCH_NS avx2
#include "cpu/arch/sparse_kernel.hpp"

namespace hgca::cpu::arch {
namespace avx2 {

struct Avx2 {
  static constexpr int W = 8;
  static constexpr int kRegs = 16;
  using V = __m256;
  using fp16 = detail::fp16_t;
  using bf16 = detail::bf16_t;

  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V x) { _mm256_storeu_ps(p, x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static float hsum(V x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  /// The 8 horizontal sums of x[0..7], in order.
  static V reduce_w(const V* x) {
    const V u0 = _mm256_hadd_ps(_mm256_hadd_ps(x[0], x[1]), _mm256_hadd_ps(x[2], x[3]));
    const V u1 = _mm256_hadd_ps(_mm256_hadd_ps(x[4], x[5]), _mm256_hadd_ps(x[6], x[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
  }
  template <class T>
  static constexpr bool kDotBf16 = false;
  using Bf16Pairs = int;
  static Bf16Pairs load_bf16_pairs(const bf16*, int32_t) { return 0; }
  static V dot_bf16(V acc, V, Bf16Pairs) { return acc; }
  static bool any_above(V x, float t) { return _mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(t), _CMP_GT_OQ)) != 0; }
  static float hmax(V x) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  /// 2^x for x < 127.5 (the kernel passes ≤ 16; -inf → 0): 2^round(x) built in the exponent bits × p(x − round(x)), p of degree 7 (rel. error < 1e-7).
  static V exp2(V x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-127.0f));  // 2^-127 → exponent field 0 → 0
    const V fl = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V f = _mm256_sub_ps(x, fl);
    V p = _mm256_set1_ps(1.525273380405984e-5f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.5403530393381606e-4f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.3333558146428443e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.618129107628477e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550410866482158e-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402265069591007e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931471805599453e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fl), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }

  static float to_float(float x) { return x; }
  static float to_float(bf16 x) {
    uint32_t u = uint32_t{x.bits} << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static float to_float(fp16 x) { return _cvtsh_ss(x.bits); }

  /// bf16 widened two halves at a time: even elements by a 16-bit shift, odd ones by a mask.
  template <class T>
  static constexpr bool kInterleaved = std::is_same_v<T, bf16>;
  static V load_half_interleaved(const bf16* p, int half, int32_t rem) {  // rem: a multiple of 8
    const __m256i x = rem >= 16 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                : _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(half == 0 ? _mm256_slli_epi32(x, 16)
                                         : _mm256_and_si256(x, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }

  template <class T>
  static V load_kv(const T* p) {
    if constexpr (sizeof(T) == 4) {
      return _mm256_loadu_ps(p);
    } else {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      if constexpr (std::is_same_v<T, fp16>) return _mm256_cvtph_ps(h);
      else return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  }
  template <class T>
  static V load_kv_tail(const T* p, int32_t n) {  // unused with W = 8 (head dims are multiples of 8)
    T tmp[W] = {};
    std::memcpy(tmp, p, sizeof(T) * n);
    return load_kv(tmp);
  }
};

}  // namespace avx2

Kernels avx2_kernels() { return avx2::kernels<avx2::Avx2>(); }

}  // namespace hgca::cpu::arch
