// Host LSE merge; the weights are computed relative to the larger LSE so nothing overflows.
#include "merge/merge_host.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dtype.hpp"

namespace hgca::merge {

template <typename T>
void merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                  int64_t rows, int32_t head_dim, T* out, float* lse_out) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const float la = lse_a[r], lb = lse_b[r];
    const float m = std::max(la, lb);
    T* o = out + r * head_dim;
    if (m == kNegInf) {  // both sides empty
      std::fill(o, o + head_dim, detail::from_float<T>(0.0f));
      if (lse_out) lse_out[r] = kNegInf;
      continue;
    }
    const float wa = std::exp(la - m), wb = std::exp(lb - m);  // exp(-inf) = 0: an empty side
    const float inv = 1.0f / (wa + wb);
    const float ca = wa * inv, cb = wb * inv;
    const float* a = o_a + r * head_dim;
    const float* b = o_b + r * head_dim;
    for (int32_t i = 0; i < head_dim; ++i) {
      // An empty side's output is 0 by convention, but never let 0·garbage reach the result.
      const float va = ca == 0.0f ? 0.0f : ca * a[i];
      const float vb = cb == 0.0f ? 0.0f : cb * b[i];
      o[i] = detail::from_float<T>(va + vb);
    }
    if (lse_out) lse_out[r] = m + std::log(wa + wb);
  }
}

template void merge_states<float>(const float*, const float*, const float*, const float*, int64_t,
                                  int32_t, float*, float*);
template void merge_states<detail::bf16_t>(const float*, const float*, const float*, const float*,
                                           int64_t, int32_t, detail::bf16_t*, float*);
template void merge_states<detail::fp16_t>(const float*, const float*, const float*, const float*,
                                           int64_t, int32_t, detail::fp16_t*, float*);

}  // namespace hgca::merge
