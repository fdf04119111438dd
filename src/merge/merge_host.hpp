// The LSE merge of two partial attention states on the host (twin of the GPU's zero-copy merge).
#pragma once

#include <cstdint>

namespace hgca::merge {

/// For each of `rows` (token, head) rows: out = (e^{lse_a} o_a + e^{lse_b} o_b) / (e^{lse_a} + e^{lse_b}),
/// computed stably; lse_out (optional) = log(e^{lse_a} + e^{lse_b}). A side with lse = -inf is empty:
/// the other side passes through unchanged; two empty sides give 0 and -inf. o_a, o_b are fp32
/// [rows, head_dim], lse in natural log; out is T [rows, head_dim].
template <typename T>
void merge_states(const float* o_a, const float* lse_a, const float* o_b, const float* lse_b,
                  int64_t rows, int32_t head_dim, T* out, float* lse_out);

}  // namespace hgca::merge
