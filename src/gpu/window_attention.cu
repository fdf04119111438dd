// Launchers of the dense window attention (DESIGN.md steps 4 and 6): validation, dtype / head dim /
// group dispatch, the choice between the decode (flash-decoding) path and the generic path, and
// the layout of the caller's workspace. Everything is enqueued on the caller's stream with the
// parameters by value, so a call can be captured in a CUDA graph.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>

#include "gpu/window_attention.hpp"
#include "gpu/window_attention_decode.cuh"
#include "gpu/window_attention_generic.cuh"

namespace hgca::gpu {
namespace {

using kernels::DecodeLayout;
using kernels::KernelArgs;
using kernels::kMaxSplitKeys;
using kernels::kTileKeys;  // slice lengths are whole tiles
using kernels::SeqBatch;

constexpr int kMaxSplits = 128;
// Slices are chosen among counts that give at most this many split blocks (4 waves of 16 blocks
// on each of 132 SMs, the most a 128-thread block can be resident): the bound workspace_bytes uses.
constexpr int64_t kMaxSplitBlocks = 4 * 16 * 132;
constexpr std::size_t kAlign = 256;

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The most slices any launch of `b` sequences of ≤ max_keys keys may take.
int64_t max_splits(int64_t b, int32_t hkv, int64_t max_keys) {
  const int64_t by_blocks = std::clamp<int64_t>(kMaxSplitBlocks / (b * hkv), 1, kMaxSplits);
  return std::max(std::min(by_blocks, ceil_div(max_keys, kTileKeys)),
                  ceil_div(max_keys, kMaxSplitKeys));
}

/// Slices for `b` sequences of at most `max_keys` keys when `slots` split blocks fit on the GPU at
/// once: the count minimizing waves × (keys per slice + a fixed cost per block), so that the last
/// wave is not left mostly empty and short slices do not drown in per-block latency.
void choose_split(int64_t b, int32_t hkv, int64_t max_keys, int64_t slots, int32_t* split,
                  int32_t* n_split) {
  constexpr int64_t kBlockCostKeys = 160;  // latency of a block's fixed steps, in keys' time
  const int64_t lo = ceil_div(max_keys, kMaxSplitKeys), hi = max_splits(b, hkv, max_keys);
  int64_t best_n = lo, best_cost = INT64_MAX;
  for (int64_t n = lo; n <= hi; ++n) {
    const int64_t sp = ceil_div(ceil_div(max_keys, n), kTileKeys) * kTileKeys;
    if (ceil_div(max_keys, sp) != n) continue;  // the same slices as a smaller count
    const int64_t cost = ceil_div(b * hkv * n, slots) * (sp + kBlockCostKeys);
    if (cost < best_cost) {
      best_cost = cost;
      best_n = n;
    }
  }
  const int64_t sp = std::min<int64_t>(
      kMaxSplitKeys, ceil_div(ceil_div(max_keys, best_n), kTileKeys) * kTileKeys);
  *split = static_cast<int32_t>(sp);
  *n_split = static_cast<int32_t>(ceil_div(max_keys, sp));
}

struct DecodeSizes {
  std::size_t part_ml, part_o, scores, total;
};
DecodeSizes decode_sizes(int64_t b, int32_t hq, int32_t hkv, int32_t d, int64_t n_split,
                         int64_t sc_stride) {
  DecodeSizes z{};
  z.part_ml = align_up(sizeof(float) * b * hq * n_split);
  z.part_o = align_up(sizeof(float) * b * hq * n_split * d);
  z.scores = align_up(sizeof(float) * b * hq * sc_stride);
  z.total = 2 * z.part_ml + z.part_o + z.scores;
  (void)hkv;
  return z;
}

bool decode_dtype_and_dim(const WindowAttentionParams& p) {
  return (p.dtype == DType::kFloat16 || p.dtype == DType::kBFloat16) &&
         (p.head_dim == 64 || p.head_dim == 128 || p.head_dim == 256) &&
         p.n_q_heads / p.n_kv_heads <= 8;
}

/// Raises a kernel's dynamic shared memory limit once (before any capture; idempotent).
template <typename K>
cudaError_t allow_smem(K* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

/// The generic kernels' one-time setup: loaded (CUDA loads kernels lazily, on first use) and their
/// shared memory limit set for the largest head dim, so no load or attribute call happens inside a
/// later capture.
template <typename T>
cudaError_t generic_setup() {
  static const cudaError_t err = [] {
    cudaFuncAttributes attr{};
    cudaError_t e = cudaFuncGetAttributes(&attr, kernels::generic_attend_kernel<T>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, kernels::generic_observe_kernel<T>);
    if (e == cudaSuccess) e = allow_smem(kernels::generic_attend_kernel<T>, kernels::generic_attend_smem(256));
    if (e == cudaSuccess)
      e = allow_smem(kernels::generic_observe_kernel<T>, kernels::generic_observe_smem(256));
    return e;
  }();
  return err;
}

template <typename T>
cudaError_t launch_generic(const KernelArgs& a, const SeqBatch& sb, int32_t b, int32_t max_new,
                           int32_t max_keys, cudaStream_t stream) {
  const std::size_t smem_a = kernels::generic_attend_smem(a.head_dim);
  const std::size_t smem_o = kernels::generic_observe_smem(a.head_dim);
  if (cudaError_t e = generic_setup<T>(); e != cudaSuccess) return e;
  const dim3 grid_a(static_cast<unsigned>(ceil_div(int64_t{max_new} * a.group,
                                                   kernels::kGenQueriesPerBlock)),
                    a.n_kv_heads, b);
  kernels::generic_attend_kernel<T><<<grid_a, kernels::kGenThreads, smem_a, stream>>>(a, sb);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const dim3 grid_o(static_cast<unsigned>(ceil_div(max_keys, kernels::kGenKeyTile)), a.n_kv_heads,
                    b);
  kernels::generic_observe_kernel<T><<<grid_o, kernels::kGenThreads, smem_o, stream>>>(a, sb);
  return cudaGetLastError();
}

/// Split blocks of this kernel resident on the GPU at once (asked once, before any capture).
template <typename K>
int64_t resident_slots(K* kernel, std::size_t smem) {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kernels::kDecThreads, smem) !=
          cudaSuccess) {
    cudaGetLastError();
    return 132 * 4;
  }
  return std::max(1, sms * per_sm);
}

/// Where the decode path keeps its intermediates; false when the workspace is too small.
bool decode_layout(const WindowAttentionParams& p, int32_t b, int32_t max_keys, int64_t slots,
                   DecodeLayout* lay) {
  choose_split(b, p.n_kv_heads, max_keys, slots, &lay->split, &lay->n_split);
  lay->sc_stride = (max_keys + 3) / 4 * 4;
  const DecodeSizes z =
      decode_sizes(b, p.n_q_heads, p.n_kv_heads, p.head_dim, lay->n_split, lay->sc_stride);
  if (p.workspace == nullptr || z.total > p.workspace_bytes ||
      reinterpret_cast<uintptr_t>(p.workspace) % 16 != 0)
    return false;
  auto* base = static_cast<char*>(p.workspace);
  lay->part_m = reinterpret_cast<float*>(base);
  lay->part_l = reinterpret_cast<float*>(base + z.part_ml);
  lay->part_o = reinterpret_cast<float*>(base + 2 * z.part_ml);
  lay->scores = reinterpret_cast<float*>(base + 2 * z.part_ml + z.part_o);
  return true;
}

/// The combine after a split kernel, as its programmatic dependent: its blocks launch while the
/// split's last blocks run and wait (griddepcontrol.wait) for the split's results.
cudaError_t launch_combine(const KernelArgs& a, const SeqBatch& sb, const DecodeLayout& lay,
                           dim3 grid, cudaStream_t stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(kernels::kCombineThreads);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernels::decode_combine_kernel, a, sb, lay);
}

/// The decode kernels' one-time setup (the split kernel's shared memory limit raised to the largest
/// launch, G 8 and the longest slice, and its resident blocks per group size, with its longest
/// slice; the combine kernel loaded), so no load or attribute call happens inside a later capture.
struct DecodeSetup {
  cudaError_t error = cudaSuccess;
  std::array<int64_t, 9> slots{};
};
template <typename T, int D>
const DecodeSetup& decode_setup() {
  static const DecodeSetup setup = [] {
    auto* kernel = kernels::decode_split_kernel<T, D>;
    DecodeSetup s;
    cudaFuncAttributes attr{};
    s.error = cudaFuncGetAttributes(&attr, kernels::decode_combine_kernel);
    if (s.error == cudaSuccess) s.error = allow_smem(kernel, kernels::decode_split_smem(kMaxSplitKeys, 8, D));
    for (int g = 1; g <= 8 && s.error == cudaSuccess; ++g)
      s.slots[g] = resident_slots(kernel, kernels::decode_split_smem(kMaxSplitKeys, g, D));
    return s;
  }();
  return setup;
}

/// Launches the decode path; *done = false (nothing launched) when the workspace does not fit.
template <typename T, int D>
cudaError_t launch_decode_t(const WindowAttentionParams& p, const KernelArgs& a,
                            const SeqBatch& sb, int32_t b, int32_t max_keys, cudaStream_t stream,
                            bool* done) {
  auto* kernel = kernels::decode_split_kernel<T, D>;
  const DecodeSetup& setup = decode_setup<T, D>();
  if (setup.error != cudaSuccess) return setup.error;
  DecodeLayout lay;
  *done = decode_layout(p, b, max_keys, setup.slots[a.group], &lay);
  if (!*done) return cudaSuccess;
  const dim3 grid(lay.n_split, a.n_kv_heads, b);
  kernel<<<grid, kernels::kDecThreads, kernels::decode_split_smem(lay.split, a.group, D), stream>>>(
      a, sb, lay);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return launch_combine(a, sb, lay, grid, stream);
}

template <typename T>
cudaError_t load_decode(int32_t head_dim) {
  switch (head_dim) {
    case 64: return decode_setup<T, 64>().error;
    case 128: return decode_setup<T, 128>().error;
    default: return decode_setup<T, 256>().error;
  }
}

template <typename T>
cudaError_t launch_decode(const WindowAttentionParams& p, const KernelArgs& a,
                          const SeqBatch& sb, int32_t b, int32_t max_keys, cudaStream_t stream,
                          bool* done) {
  switch (a.head_dim) {
    case 64: return launch_decode_t<T, 64>(p, a, sb, b, max_keys, stream, done);
    case 128: return launch_decode_t<T, 128>(p, a, sb, b, max_keys, stream, done);
    default: return launch_decode_t<T, 256>(p, a, sb, b, max_keys, stream, done);
  }
}

bool aligned16(const void* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; }

/// One launch's worth (≤ kMaxLaunchBatch sequences).
cudaError_t launch_chunk(const WindowAttentionParams& p, const KernelArgs& a, const WindowSeq* seqs,
                         int32_t b, cudaStream_t stream) {
  SeqBatch sb;
  int32_t max_new = 0, max_keys = 0;
  // The decode path reads rows with 16-byte loads; other pointers take the generic path.
  bool decode = decode_dtype_and_dim(p) && aligned16(p.q) && aligned16(p.k_new) &&
                aligned16(p.v_new) && aligned16(p.ring_k) && aligned16(p.ring_v);
  for (int32_t i = 0; i < b; ++i) {
    const WindowSeq& s = seqs[i];
    sb.seq[i] = kernels::SeqDesc{static_cast<int32_t>(s.q_row), static_cast<int32_t>(s.obs_offset),
                                 s.n_new, s.w, s.tail, s.ring};
    max_new = std::max(max_new, s.n_new);
    max_keys = std::max(max_keys, s.w + s.n_new);
    decode = decode && s.n_new == 1;
  }
  if (decode) {
    bool done = false;
    const cudaError_t e =
        p.dtype == DType::kFloat16
            ? launch_decode<__half>(p, a, sb, b, max_keys, stream, &done)
            : launch_decode<__nv_bfloat16>(p, a, sb, b, max_keys, stream, &done);
    if (e != cudaSuccess || done) return e;
    // A workspace sized for another call: the generic path needs none.
  }
  switch (p.dtype) {
    case DType::kFloat16: return launch_generic<__half>(a, sb, b, max_new, max_keys, stream);
    case DType::kBFloat16: return launch_generic<__nv_bfloat16>(a, sb, b, max_new, max_keys, stream);
    case DType::kFloat32: break;
  }
  return launch_generic<float>(a, sb, b, max_new, max_keys, stream);
}

bool valid_shape(const WindowAttentionParams& p) {
  return p.n_q_heads > 0 && p.n_kv_heads > 0 && p.n_q_heads % p.n_kv_heads == 0 &&
         p.head_dim >= 8 && p.head_dim <= 256 && p.head_dim % 8 == 0 && p.capacity >= 0 &&
         (p.dtype == DType::kFloat32 || p.dtype == DType::kFloat16 ||
          p.dtype == DType::kBFloat16);
}

}  // namespace

std::size_t window_attention_workspace_bytes(const WindowAttentionParams& p, int64_t total_new,
                                             int32_t max_w, int32_t max_new) {
  (void)total_new;
  (void)max_new;  // any launch whose sequences all bring one token takes the decode path
  if (!valid_shape(p) || !decode_dtype_and_dim(p) || max_w < 0) return 0;
  // The largest decode layout of any launch of ≤ min(batch, 128) sequences (128 when batch is
  // not set) of ≤ max_w + 1 keys. The generic path needs no workspace.
  const int64_t max_keys = int64_t{max_w} + 1;
  const int32_t b_max = p.batch > 0 ? std::min(p.batch, kMaxLaunchBatch) : kMaxLaunchBatch;
  std::size_t best = 0;
  for (int32_t b = 1; b <= b_max; ++b) {
    const DecodeSizes z = decode_sizes(b, p.n_q_heads, p.n_kv_heads, p.head_dim,
                                       max_splits(b, p.n_kv_heads, max_keys),
                                       (max_keys + 3) / 4 * 4);
    best = std::max(best, z.total);
  }
  return best;
}

int launch_window_attention(const WindowAttentionParams& p, void* stream) {
  if (p.batch == 0) return cudaSuccess;
  if (!valid_shape(p) || p.batch < 0 || p.seqs == nullptr || p.q == nullptr ||
      p.k_new == nullptr || p.v_new == nullptr || p.o == nullptr || p.lse == nullptr ||
      p.obs_new == nullptr)
    return cudaErrorInvalidValue;
  for (int32_t i = 0; i < p.batch; ++i) {
    const WindowSeq& s = p.seqs[i];
    if (s.n_new < 1 || s.w < 0 || s.w > p.capacity || (s.w > 0 && (s.tail < 0 || s.tail >= p.capacity)) ||
        s.q_row < 0 || s.obs_offset < 0 || s.ring < 0)
      return cudaErrorInvalidValue;
    // The kernels carry row offsets in 32 bits (SeqDesc).
    if (s.q_row + s.n_new > INT32_MAX || s.obs_offset + int64_t{p.n_kv_heads} * s.n_new > INT32_MAX)
      return cudaErrorInvalidValue;
    if (s.w > 0 && (p.ring_k == nullptr || p.ring_v == nullptr || p.ring_maw == nullptr))
      return cudaErrorInvalidValue;
  }

  KernelArgs a{};
  a.q = p.q;
  a.k_new = p.k_new;
  a.v_new = p.v_new;
  a.ring_k = p.ring_k;
  a.ring_v = p.ring_v;
  a.ring_maw = p.ring_maw;
  a.o = p.o;
  a.lse = p.lse;
  a.obs_new = p.obs_new;
  a.n_q_heads = p.n_q_heads;
  a.n_kv_heads = p.n_kv_heads;
  a.group = p.n_q_heads / p.n_kv_heads;
  a.head_dim = p.head_dim;
  a.capacity = p.capacity;
  a.scale2 = p.sm_scale * kernels::kLog2e;
  a.alpha = p.alpha;

  auto* st = static_cast<cudaStream_t>(stream);
  for (int32_t b0 = 0; b0 < p.batch; b0 += kMaxLaunchBatch) {
    const int32_t b = std::min(kMaxLaunchBatch, p.batch - b0);
    if (cudaError_t e = launch_chunk(p, a, p.seqs + b0, b, st); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

int load_window_attention_kernels(const WindowAttentionParams& p) {
  if (!valid_shape(p)) return cudaErrorInvalidValue;
  if (decode_dtype_and_dim(p)) {
    const cudaError_t e = p.dtype == DType::kFloat16 ? load_decode<__half>(p.head_dim)
                                                     : load_decode<__nv_bfloat16>(p.head_dim);
    if (e != cudaSuccess) return e;
  }
  switch (p.dtype) {
    case DType::kFloat16: return generic_setup<__half>();
    case DType::kBFloat16: return generic_setup<__nv_bfloat16>();
    case DType::kFloat32: break;
  }
  return generic_setup<float>();
}

}  // namespace hgca::gpu
