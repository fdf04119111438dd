// Element types of the KV cache and their conversions to and from fp32 (round to nearest even).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "hgca/hgca.hpp"

namespace hgca::detail {

struct bf16_t {
  uint16_t bits;
};
struct fp16_t {
  uint16_t bits;
};

inline float to_float(float x) { return x; }
inline float to_float(bf16_t x) { return std::bit_cast<float>(uint32_t{x.bits} << 16); }
inline float to_float(fp16_t x) {
  const uint32_t sign = uint32_t{x.bits & 0x8000u} << 16;
  const uint32_t exp = (x.bits >> 10) & 0x1Fu;
  const uint32_t man = x.bits & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13));  // inf / nan
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
  // Subnormal: man × 2^-24, exact in fp32.
  const float mag = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -mag : mag;
}

template <typename T>
T from_float(float x);
template <>
inline float from_float<float>(float x) { return x; }
template <>
inline bf16_t from_float<bf16_t>(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<uint16_t>((u >> 16) | 0x40u)};  // quiet nan
  u += 0x7FFFu + ((u >> 16) & 1u);
  return {static_cast<uint16_t>(u >> 16)};
}
template <>
inline fp16_t from_float<fp16_t>(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return {static_cast<uint16_t>(sign | 0x7E00u)};
  if (abs >= 0x477FF000u) return {static_cast<uint16_t>(sign | 0x7C00u)};  // rounds to ≥ 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): round |x| / 2^-24 to nearest even integer.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;
    const auto rounded = static_cast<uint32_t>(__builtin_nearbyintf(scaled));
    return {static_cast<uint16_t>(sign | rounded)};
  }
  uint32_t v = abs - (112u << 23);            // rebias exponent 127 → 15
  v += 0xFFFu + ((v >> 13) & 1u);            // round mantissa 23 → 10 bits, nearest even
  return {static_cast<uint16_t>(sign | (v >> 13))};
}

/// Calls f(T{}) with T the C++ element type of `dtype`.
template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat16: return f(fp16_t{});
    case DType::kBFloat16: return f(bf16_t{});
    case DType::kFloat32: break;
  }
  return f(float{});
}

}  // namespace hgca::detail
