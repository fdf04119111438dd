// The per-ISA entry points of the sparse attention kernels; each lives in its own translation unit
// compiled with that ISA's flags (sparse_<isa>.cpp), chosen at run time by the engine.
#pragma once

#include <cstdint>

#include "hgca/hgca.hpp"

namespace hgca::cpu::arch {

/// n contiguous keys of one KV head: K and V rows [n, head_dim] each.
struct KvRun {
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t n = 0;
};

/// What both kernels read: query rows × group heads of one KV head over n keys, in one run or a
/// few taken in turn.
struct QueriesOverKeys {
  int64_t n = 0;
  const KvRun* runs = nullptr;  ///< n_runs runs in order, their n summing to n
  int32_t n_runs = 0;
  const void* q = nullptr;  ///< row r, head g at q + r*q_row_stride + g*head_dim
  int64_t q_row_stride = 0;
  int32_t n_rows = 1;
  int32_t group = 1;
  int32_t head_dim = 0;
  float sm_scale = 1.0f;
};

/// One unit of work, attended in one pass. Writes o normalized over the n keys and lse in natural
/// log (o = 0, lse = -inf when n = 0).
struct UnitParams : QueriesOverKeys {
  float* o = nullptr;  ///< row r, head g at o + r*o_row_stride + g*head_dim
  int64_t o_row_stride = 0;
  float* lse = nullptr;  ///< row r, head g at lse + r*lse_row_stride + g
  int64_t lse_row_stride = 0;
};

using UnitKernel = void (*)(const UnitParams&);

/// HGCA Algorithm 1, line 20 (a re-evaluation's A_cpu): adds to acc[g * acc_stride + t] (t < n)
/// the softmax weight of key t for every row of head g, the softmax taken over the n keys. Only K
/// is read (the runs' v is unused).
struct WeightsParams : QueriesOverKeys {
  float* acc = nullptr;     ///< [group, acc_stride], accumulated into
  int64_t acc_stride = 0;   ///< 0: n
  float* work = nullptr;    ///< weights_work_floats(...) floats, the kernel's own
};

/// Floats of WeightsParams::work for every ISA: the queries, and 8 queries' scores over n keys.
inline int64_t weights_work_floats(int32_t n_rows, int32_t group, int32_t head_dim, int64_t n) {
  constexpr int64_t kMaxW = 16;
  return int64_t{n_rows} * group * ((head_dim + 2 * kMaxW - 1) / (2 * kMaxW) * 2 * kMaxW) + 8 * (n + 2 * kMaxW);
}

using WeightsKernel = void (*)(const WeightsParams&);

/// The kernels of one ISA, by KV dtype.
struct Kernels {
  UnitKernel f32 = nullptr;
  UnitKernel f16 = nullptr;
  UnitKernel bf16 = nullptr;
  WeightsKernel weights_f32 = nullptr;
  WeightsKernel weights_f16 = nullptr;
  WeightsKernel weights_bf16 = nullptr;
  UnitKernel get(DType dtype) const {
    return dtype == DType::kFloat16 ? f16 : dtype == DType::kBFloat16 ? bf16 : f32;
  }
  WeightsKernel weights(DType dtype) const {
    return dtype == DType::kFloat16 ? weights_f16 : dtype == DType::kBFloat16 ? weights_bf16 : weights_f32;
  }
};

Kernels portable_kernels();
#if defined(HGCA_HAVE_AVX2_KERNELS)
Kernels avx2_kernels();
#endif
#if defined(HGCA_HAVE_AVX512_KERNELS)
Kernels avx512_kernels();
#endif
#if defined(HGCA_HAVE_AVX512BF16_KERNELS)
Kernels avx512bf16_kernels();
#endif

}  // namespace hgca::cpu::arch
