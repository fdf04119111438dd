// fp32 ⇄ bf16 / fp16 conversions (round to nearest even), as the runtime does them: for callers
// that hold fp32 activations and hand the runtime 16-bit tensors.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>

#include "hgca/hgca.hpp"

namespace hgca {

inline uint16_t float_to_bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // keep NaN a NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_float(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

inline uint16_t float_to_fp16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t mag = u & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to ≥ 65520: inf
  if (mag < 0x38800000u) {
    // Below the smallest normal 2^-14: the result is |x| in units of 2^-24, rounded to even.
    const float units = std::bit_cast<float>(mag) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)));
  }
  uint32_t v = mag - (112u << 23);  // exponent bias 127 → 15
  v += 0xFFFu + ((v >> 13) & 1u);   // 23 → 10 mantissa bits, nearest even (a carry bumps the exponent)
  return static_cast<uint16_t>(sign | (v >> 13));
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
  const float mag = static_cast<float>(man) * 5.9604644775390625e-8f;  // subnormal: man × 2^-24
  return sign != 0 ? -mag : mag;
}

/// Converts fp32 `src` to the 16-bit `dtype` (kFloat16 or kBFloat16) in `dst`, element by element.
inline void convert_from_float(DType dtype, std::span<const float> src, uint16_t* dst) {
  if (dtype == DType::kBFloat16) {
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = float_to_bf16(src[i]);
  } else {
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = float_to_fp16(src[i]);
  }
}

/// Converts the 16-bit `dtype` elements of `src` to fp32 `dst`.
inline void convert_to_float(DType dtype, const uint16_t* src, std::span<float> dst) {
  if (dtype == DType::kBFloat16) {
    for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = bf16_to_float(src[i]);
  } else {
    for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = fp16_to_float(src[i]);
  }
}

}  // namespace hgca
