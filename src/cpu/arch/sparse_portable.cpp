// The sparse attention kernels in plain C++ (8 lanes as loops the compiler may vectorize): the
// fallback for CPUs without AVX2 and the baseline the SIMD paths are tested against.
#include <cstring>

#include "dtype.hpp"

#define HGCA_ARCH_NS portable
#include "cpu/arch/sparse_kernel.hpp"

namespace hgca::cpu::arch {
namespace portable {

struct Portable {
  static constexpr int W = 8;
  static constexpr int kRegs = 16;
  struct V {
    float x[W];
  };
  using fp16 = detail::fp16_t;
  using bf16 = detail::bf16_t;

  static V zero() { return set1(0.0f); }
  static V set1(float a) {
    V r;
    for (float& e : r.x) e = a;
    return r;
  }
  static V load(const float* p) {
    V r;
    std::memcpy(r.x, p, sizeof r.x);
    return r;
  }
  static void store(float* p, V a) { std::memcpy(p, a.x, sizeof a.x); }
  static V fma(V a, V b, V c) {
    for (int i = 0; i < W; ++i) c.x[i] += a.x[i] * b.x[i];  // not std::fma: a libm call without FMA hardware
    return c;
  }
  static V mul(V a, V b) {
    for (int i = 0; i < W; ++i) a.x[i] *= b.x[i];
    return a;
  }
  static V sub(V a, V b) {
    for (int i = 0; i < W; ++i) a.x[i] -= b.x[i];
    return a;
  }
  static V add(V a, V b) {
    for (int i = 0; i < W; ++i) a.x[i] += b.x[i];
    return a;
  }
  static V max(V a, V b) {
    for (int i = 0; i < W; ++i) a.x[i] = std::max(a.x[i], b.x[i]);
    return a;
  }
  static float hsum(V a) {
    float s = 0.0f;
    for (float e : a.x) s += e;
    return s;
  }
  static V reduce_w(const V* x) {
    V r;
    for (int i = 0; i < W; ++i) r.x[i] = hsum(x[i]);
    return r;
  }
  template <class T>
  static constexpr bool kDotBf16 = false;
  using Bf16Pairs = int;
  static Bf16Pairs load_bf16_pairs(const bf16*, int32_t) { return 0; }
  static V dot_bf16(V acc, V, Bf16Pairs) { return acc; }
  static bool any_above(V a, float t) {
    for (float e : a.x)
      if (e > t) return true;
    return false;
  }
  static float hmax(V a) {
    float s = a.x[0];
    for (float e : a.x) s = std::max(s, e);
    return s;
  }
  static V exp2(V a) {
    for (float& e : a.x) e = std::exp2(e);
    return a;
  }

  static float to_float(float x) { return x; }
  static float to_float(bf16 x) { return detail::to_float(x); }
  static float to_float(fp16 x) { return detail::to_float(x); }

  template <class T>
  static constexpr bool kInterleaved = false;
  static V load_half_interleaved(const bf16*, int, int32_t) { return zero(); }

  template <class T>
  static V load_kv(const T* p) {
    V r;
    for (int i = 0; i < W; ++i) r.x[i] = to_float(p[i]);
    return r;
  }
  template <class T>
  static V load_kv_tail(const T* p, int32_t n) {
    V r = zero();
    for (int i = 0; i < n; ++i) r.x[i] = to_float(p[i]);
    return r;
  }
};

}  // namespace portable

Kernels portable_kernels() { return portable::kernels<portable::Portable>(); }

}  // namespace hgca::cpu::arch
