// The KV cache's element types as distinct C++ types, so kernels are templated on them; their
// conversions are the public ones of hgca/dtype.hpp.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hgca/dtype.hpp"
#include "hgca/hgca.hpp"

namespace hgca::detail {

struct bf16_t {
  uint16_t bits;
};
struct fp16_t {
  uint16_t bits;
};

inline float to_float(float x) { return x; }
inline float to_float(bf16_t x) { return bf16_to_float(x.bits); }
inline float to_float(fp16_t x) { return fp16_to_float(x.bits); }

template <typename T>
T from_float(float x);
template <>
inline float from_float<float>(float x) { return x; }
template <>
inline bf16_t from_float<bf16_t>(float x) { return {float_to_bf16(x)}; }
template <>
inline fp16_t from_float<fp16_t>(float x) { return {float_to_fp16(x)}; }

/// The DType of element type T (the inverse of dispatch_dtype).
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, fp16_t>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, bf16_t>) return DType::kBFloat16;
  else return DType::kFloat32;
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
