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
#include <map>
#include <mutex>

#include "gpu/window_attention.hpp"
#include "gpu/window_attention_decode.cuh"
#include "gpu/window_attention_generic.cuh"

namespace hgca::gpu {
namespace {

using kernels::DecodeLayout;
using kernels::KernelArgs;
using kernels::kMaxClusterKeys;
using kernels::kMaxClusterSlices;
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

/// A slice count, its cost in choose_split's model (INT64_MAX: no count fits) and its waves.
struct SplitChoice {
  int32_t split = 0, n_split = 0;
  int64_t cost = INT64_MAX, waves = 0;
};

/// Slices of at most `max_split` keys for `b` sequences of at most `max_keys` keys, at most `max_n`
/// of them, when `slots(n)` blocks of an n-slice launch fit on the GPU at once (0: none fit): the
/// count minimizing waves × (keys per slice + a fixed cost per block), so that the last wave is
/// not left mostly empty and short slices do not drown in per-block latency. Slices are `split`
/// keys (whole tiles), the last one shorter, or with `balanced` the tiles spread evenly (no slice
/// more than one tile longer than another; `split` is the longest).
template <typename Slots>
SplitChoice choose_split(int64_t b, int32_t hkv, int64_t max_keys, int64_t max_split,
                         int64_t max_n, bool balanced, const Slots& slots) {
  constexpr int64_t kBlockCostKeys = 160;  // latency of a block's fixed steps, in keys' time
  const int64_t tiles = ceil_div(max_keys, kTileKeys);
  SplitChoice best;
  for (int64_t n = ceil_div(max_keys, max_split); n <= std::min(max_n, tiles); ++n) {
    const int64_t sp = balanced ? ceil_div(tiles, n) * kTileKeys
                                : ceil_div(ceil_div(max_keys, n), kTileKeys) * kTileKeys;
    if (!balanced && ceil_div(max_keys, sp) != n) continue;  // the same slices as a smaller count
    const int64_t resident = slots(n);
    if (resident <= 0) continue;
    const int64_t keys = balanced ? ceil_div(max_keys, n) : sp;  // of the longest slice, about
    const int64_t waves = ceil_div(b * hkv * n, resident);
    const int64_t cost = waves * (keys + kBlockCostKeys);
    if (cost < best.cost) best = {static_cast<int32_t>(sp), static_cast<int32_t>(n), cost, waves};
  }
  return best;
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
  return window_decode_path_serves(p.dtype, p.head_dim, p.n_q_heads / p.n_kv_heads);
}

/// Raises a kernel's dynamic shared memory limit once (before any capture; idempotent).
template <typename K>
cudaError_t allow_smem(K* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

/// A kernel setup made once per device: a kernel's attributes (its shared memory limit, cluster
/// sizes) and its occupancy belong to the current device's context, so a runtime on another GPU of
/// the process needs its own. `make` runs with that device current.
template <typename Setup>
class PerDevice {
 public:
  template <typename Make>
  const Setup& get(Make&& make) {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();  // make() then reports the error
    std::lock_guard lock(mutex_);
    auto it = setups_.find(device);
    if (it == setups_.end()) it = setups_.emplace(device, make()).first;
    return it->second;  // a map's entries stay where they are
  }

 private:
  std::mutex mutex_;
  std::map<int, Setup> setups_;
};

/// The generic kernels' setup on the current device: loaded (CUDA loads kernels lazily, on first
/// use) and their shared memory limit set for the largest head dim, so no load or attribute call
/// happens inside a later capture.
template <typename T>
cudaError_t generic_setup() {
  static PerDevice<cudaError_t> setups;
  return setups.get([] {
    cudaFuncAttributes attr{};
    cudaError_t e = cudaFuncGetAttributes(&attr, kernels::generic_attend_kernel<T>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, kernels::generic_observe_kernel<T>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, kernels::generic_combine_kernel);
    if (e == cudaSuccess) e = allow_smem(kernels::generic_attend_kernel<T>, kernels::generic_attend_smem(256));
    if (e == cudaSuccess)
      e = allow_smem(kernels::generic_observe_kernel<T>, kernels::generic_observe_smem(256));
    return e;
  });
}

template <typename T>
cudaError_t launch_generic(const KernelArgs& a, const SeqBatch& sb, const kernels::GenericSplit& sp,
                           int32_t b, int32_t max_new, int32_t max_keys, cudaStream_t stream) {
  const std::size_t smem_a = kernels::generic_attend_smem(a.head_dim);
  const std::size_t smem_o = kernels::generic_observe_smem(a.head_dim);
  if (cudaError_t e = generic_setup<T>(); e != cudaSuccess) return e;
  const int64_t q_blocks = ceil_div(int64_t{max_new} * a.group, kernels::kGenQueriesPerBlock);
  const dim3 grid_a(static_cast<unsigned>(q_blocks * sp.n_split), a.n_kv_heads, b);
  kernels::generic_attend_kernel<T><<<grid_a, kernels::kGenThreads, smem_a, stream>>>(a, sb, sp);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (sp.n_split > 1) {
    const dim3 grid_c(static_cast<unsigned>(int64_t{max_new} * a.n_q_heads), 1, b);
    kernels::generic_combine_kernel<<<grid_c, kernels::kGenThreads, 0, stream>>>(a, sb, sp);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
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

/// Where the split + combine path keeps its intermediates (lay's slices chosen); false when the
/// workspace is too small.
bool decode_layout(const WindowAttentionParams& p, int32_t b, int32_t max_keys, DecodeLayout* lay) {
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

/// Split blocks resident on the GPU at once in clusters of n, n = 0..kMaxClusterSlices (0: a
/// cluster of n does not fit), asked once, before any capture.
template <typename K>
std::array<int64_t, kMaxClusterSlices + 1> cluster_slots(K* kernel, std::size_t smem) {
  std::array<int64_t, kMaxClusterSlices + 1> s{};
  for (int n = 1; n <= kMaxClusterSlices; ++n) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(n);
    cfg.blockDim = dim3(kernels::kDecThreads);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = n;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      cudaGetLastError();
      clusters = 0;
    }
    s[n] = int64_t{clusters} * n;
  }
  return s;
}

/// Whether the cluster path (choice `one`) serves a launch rather than split + combine (`two`).
/// choose_split's model leaves out what the cluster path saves (the combine and the scores' round
/// trip through the workspace) and what its clusters' coarser scheduling costs, which shows most
/// when split + combine takes few waves. Measured on the H200 over the sweep
/// (bench/results/gpu-window: cluster, long-slices, planner-cluster): the cluster path is faster
/// within 10 % of the other's modelled cost, and within 30 % from 3 waves of split + combine on
/// (G 8, batch 16, W 16384: 1.26 × the modelled cost, 5 % faster measured), where the combine's
/// pass over every key's G scores weighs most.
bool prefer_cluster(const SplitChoice& one, const SplitChoice& two) {
  constexpr int64_t kSlackPct = 110, kManyWavesSlackPct = 130, kManyWaves = 3;
  if (one.cost == INT64_MAX) return false;
  return one.cost * 100 <= two.cost * (two.waves >= kManyWaves ? kManyWavesSlackPct : kSlackPct);
}

/// The decode kernels' setup on the current device, done before any capture so that no module load
/// or attribute call happens inside one: both split kernels' shared memory limit raised to the
/// largest launch (G 8, longest slice), clusters beyond 8 allowed, the combine loaded; per group
/// size, the cluster path's longest slice (the longest up to kMaxClusterKeys that leaves as many
/// blocks per SM as kMaxSplitKeys: fewer, longer slices fill the GPU with smaller clusters) and the
/// resident blocks, alone and in clusters of each size, at each path's longest slice.
struct DecodeSetup {
  cudaError_t error = cudaSuccess;
  std::array<int64_t, 9> slots{};
  std::array<int32_t, 9> cluster_keys{};
  std::array<std::array<int64_t, kMaxClusterSlices + 1>, 9> clustered{};
};
template <typename T, int D>
const DecodeSetup& decode_setup() {
  static PerDevice<DecodeSetup> setups;
  return setups.get([] {
    auto* split_kernel = kernels::decode_split_kernel<T, D>;
    auto* cluster_kernel = kernels::decode_cluster_kernel<T, D>;
    auto smem = [](int keys, int g) { return kernels::decode_split_smem(keys, g, D); };
    DecodeSetup s;
    cudaFuncAttributes attr{};
    s.error = cudaFuncGetAttributes(&attr, kernels::decode_combine_kernel);
    if (s.error == cudaSuccess) s.error = allow_smem(split_kernel, smem(kMaxSplitKeys, 8));
    if (s.error == cudaSuccess) s.error = allow_smem(cluster_kernel, smem(kMaxClusterKeys, 8));
    if (s.error == cudaSuccess)
      s.error = cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    for (int g = 1; g <= 8 && s.error == cudaSuccess; ++g) {
      s.slots[g] = resident_slots(split_kernel, smem(kMaxSplitKeys, g));
      const int64_t cluster_resident = resident_slots(cluster_kernel, smem(kMaxSplitKeys, g));
      int keys = kMaxClusterKeys;
      while (keys > kMaxSplitKeys && resident_slots(cluster_kernel, smem(keys, g)) < cluster_resident)
        keys -= kTileKeys;
      s.cluster_keys[g] = keys;
      s.clustered[g] = cluster_slots(cluster_kernel, smem(keys, g));
    }
    return s;
  });
}

/// The decode path's plan for one launch: which kernels, and the slices.
struct DecodePlan {
  WindowAttentionPath path = WindowAttentionPath::kGeneric;
  DecodeLayout lay;
  int32_t tail_b = 0;     ///< cluster path: the last tail_b sequences in a second launch
  DecodeLayout tail_lay;  ///< its slices
};

/// The cluster path's tail launch. Clusters of n ≥ 4 slices start only where n slots are free in
/// one GPC, so after the first wave they start unevenly, and a launch of a few waves ends in a tail
/// where fewer and fewer blocks stream (goal shape: the last ~25 µs, bench/results/gpu-window/
/// finish). A quarter of a wave's (sequence, KV head) pairs, in whole sequences from the batch's
/// end, then go to a second launch of twice the slices (at most 16), which starts as the first
/// one's blocks end (programmatic dependent launch) and ends in a shorter tail. Measured on the
/// H200 (bench/results/gpu-window/tail), G 4, W 16384, 7-slice clusters: 3.8 / 3.2 / 2.5 % faster
/// at 2 / 3 / 4 waves (batch 8 / 12 / 16); at 1- and 2-slice clusters up to 13 % slower, and from
/// 9 waves on no gain.
void plan_tail(int32_t group, int32_t b, int32_t hkv, int64_t max_keys,
               const std::array<std::array<int64_t, kMaxClusterSlices + 1>, 9>& clustered,
               DecodePlan* plan) {
  constexpr int32_t kMinSlices = 4;
  constexpr int64_t kMaxWaves = 4;
  const int32_t n = plan->lay.n_split;
  const int64_t n2 = std::min(kMaxClusterSlices, 2 * n);
  const int64_t slots = clustered[group][n];
  if (n < kMinSlices || n2 <= n || clustered[group][n2] <= 0 || slots <= 0) return;
  const int64_t waves = ceil_div(int64_t{b} * hkv * n, slots);
  const int64_t tail_b = std::max<int64_t>(1, (slots / n / 4 + hkv / 2) / hkv);
  if (waves < 2 || waves > kMaxWaves || tail_b >= b) return;
  plan->tail_b = static_cast<int32_t>(tail_b);
  plan->tail_lay.n_split = static_cast<int32_t>(n2);
  plan->tail_lay.split = static_cast<int32_t>(ceil_div(ceil_div(max_keys, kTileKeys), n2) * kTileKeys);
  plan->tail_lay.tail_launch = 2;
  plan->lay.tail_launch = 1;
}

/// Chooses between the cluster path (at most kMaxClusterSlices slices, no workspace) and the
/// split + combine path (any slice count, the workspace); kGeneric when neither can serve.
template <typename T, int D>
cudaError_t plan_decode_t(const WindowAttentionParams& p, int32_t group, int32_t b,
                          int32_t max_keys, DecodePlan* plan) {
  const DecodeSetup& setup = decode_setup<T, D>();
  if (setup.error != cudaSuccess) return setup.error;
  const auto& slots = setup.slots;
  const auto& clustered = setup.clustered;
  const int32_t hkv = p.n_kv_heads;
  const SplitChoice two = choose_split(b, hkv, max_keys, kMaxSplitKeys,
                                       max_splits(b, hkv, max_keys), false,
                                       [&](int64_t) { return slots[group]; });
  const SplitChoice one = choose_split(b, hkv, max_keys, setup.cluster_keys[group],
                                       kMaxClusterSlices, true,
                                       [&](int64_t n) { return clustered[group][n]; });
  plan->lay = DecodeLayout{};
  if (prefer_cluster(one, two)) {
    plan->path = WindowAttentionPath::kDecodeCluster;
    plan->lay.split = one.split;
    plan->lay.n_split = one.n_split;
    plan_tail(group, b, hkv, max_keys, clustered, plan);
    return cudaSuccess;
  }
  plan->lay.split = two.split;
  plan->lay.n_split = two.n_split;
  if (decode_layout(p, b, max_keys, &plan->lay)) {
    plan->path = WindowAttentionPath::kDecodeCombine;
  } else if (one.cost != INT64_MAX) {  // no workspace for this call: the cluster path needs none
    plan->path = WindowAttentionPath::kDecodeCluster;
    plan->lay = DecodeLayout{};
    plan->lay.split = one.split;
    plan->lay.n_split = one.n_split;
    plan_tail(group, b, hkv, max_keys, clustered, plan);
  } else {
    plan->path = WindowAttentionPath::kGeneric;
  }
  return cudaSuccess;
}

/// One launch of the cluster kernel in clusters of all the slices of a (sequence, KV head); a tail
/// launch (tail_launch 2) as its predecessor's programmatic dependent.
template <typename T, int D>
cudaError_t launch_cluster(const DecodeLayout& lay, const KernelArgs& a, const SeqBatch& sb,
                           int32_t b, cudaStream_t stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(lay.n_split, a.n_kv_heads, b);
  cfg.blockDim = dim3(kernels::kDecThreads);
  cfg.dynamicSmemBytes = kernels::decode_split_smem(lay.split, a.group, D);
  cfg.stream = stream;
  cudaLaunchAttribute attr[2]{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = lay.n_split;
  attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = lay.tail_launch == 2 ? 2 : 1;
  return cudaLaunchKernelEx(&cfg, kernels::decode_cluster_kernel<T, D>, a, sb, lay);
}

/// Launches a decode plan's kernels: the cluster kernel in clusters of all the slices of a
/// (sequence, KV head), in one launch or two (plan_tail), or the split kernel and the combine.
template <typename T, int D>
cudaError_t launch_decode_t(const DecodePlan& plan, const KernelArgs& a, const SeqBatch& sb,
                            int32_t b, cudaStream_t stream) {
  if (plan.path == WindowAttentionPath::kDecodeCombine) {
    const dim3 grid(plan.lay.n_split, a.n_kv_heads, b);
    kernels::decode_split_kernel<T, D><<<grid, kernels::kDecThreads,
                                         kernels::decode_split_smem(plan.lay.split, a.group, D),
                                         stream>>>(a, sb, plan.lay);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    return launch_combine(a, sb, plan.lay, grid, stream);
  }
  if (cudaError_t e = launch_cluster<T, D>(plan.lay, a, sb, b - plan.tail_b, stream);
      e != cudaSuccess || plan.tail_b == 0)
    return e;
  SeqBatch tail;
  for (int32_t i = 0; i < plan.tail_b; ++i) tail.seq[i] = sb.seq[b - plan.tail_b + i];
  return launch_cluster<T, D>(plan.tail_lay, a, tail, plan.tail_b, stream);
}

/// Calls f.template operator()<T, D>() for the decode path's dtype (fp16 or bf16) and head dim.
template <typename F>
cudaError_t dispatch_decode(const WindowAttentionParams& p, F&& f) {
  auto by_dim = [&]<typename T>() {
    switch (p.head_dim) {
      case 64: return f.template operator()<T, 64>();
      case 128: return f.template operator()<T, 128>();
      default: return f.template operator()<T, 256>();
    }
  };
  return p.dtype == DType::kFloat16 ? by_dim.template operator()<__half>()
                                    : by_dim.template operator()<__nv_bfloat16>();
}

bool aligned16(const void* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; }

/// One launch's worth (≤ kMaxLaunchBatch sequences): its sequences for the kernels and its plan.
struct Chunk {
  SeqBatch sb;
  int32_t b = 0, max_new = 0, max_keys = 0;
  DecodePlan plan;  ///< kGeneric unless every sequence brings one token and a decode path serves
  kernels::GenericSplit gen;  ///< the generic path's key split
};

/// The generic path's key split for a launch of `b` sequences of ≤ max_new rows and ≤ max_keys
/// keys: as many slices (of ≥ one key tile, ≤ kernels::kGenMaxSplits) as bring it to about
/// kGenTargetBlocks attend blocks, two waves on a 132-SM GPU at D 128. Without a split, a decode
/// step ran one block per (sequence, KV head) over all its keys: at G 16, batch 1, W 16384, 8.1 ms
/// against SDPA's 26 µs. Measured on the H200 at G 16 (bench/results/gpu-window/generic-split):
/// one-tile slices take the most off small launches (batch 1, W 1024: 140 → 57 µs against
/// 256-key slices), 128 slices rather than 64 off long windows (batch 1, W 16384: 199 → 148 µs);
/// a larger target moved other shapes ±12 %.
int64_t generic_slices(int64_t b, int32_t hkv, int32_t group, int32_t max_new, int64_t max_keys) {
  constexpr int64_t kGenTargetBlocks = 1280;
  const int64_t blocks = ceil_div(int64_t{max_new} * group, kernels::kGenQueriesPerBlock) * hkv * b;
  return std::clamp<int64_t>(
      std::min(ceil_div(kGenTargetBlocks, blocks), ceil_div(max_keys, kernels::kGenKeyTile)), 1,
      kernels::kGenMaxSplits);
}

/// Workspace bytes of the generic split's partials for `rows` q rows.
std::size_t generic_split_bytes(int64_t rows, int32_t hq, int32_t d, int64_t n_split) {
  return 2 * align_up(sizeof(float) * rows * hq * n_split) +
         align_up(sizeof(float) * rows * hq * n_split * d);
}

/// The chunk's generic split: generic_slices, fewer where the workspace holds fewer partials, none
/// without a workspace.
kernels::GenericSplit plan_generic(const WindowAttentionParams& p, const WindowSeq* seqs,
                                   const Chunk& ch) {
  kernels::GenericSplit sp;
  int64_t n = generic_slices(ch.b, p.n_kv_heads, p.n_q_heads / p.n_kv_heads, ch.max_new, ch.max_keys);
  int64_t row0 = INT64_MAX, row_end = 0;
  for (int32_t i = 0; i < ch.b; ++i) {
    row0 = std::min(row0, seqs[i].q_row);
    row_end = std::max(row_end, seqs[i].q_row + seqs[i].n_new);
  }
  const int64_t rows = row_end - row0;
  if (p.workspace == nullptr || !aligned16(p.workspace)) return sp;
  while (n > 1 && generic_split_bytes(rows, p.n_q_heads, p.head_dim, n) > p.workspace_bytes) --n;
  if (n <= 1) return sp;
  sp.split = static_cast<int32_t>(ceil_div(ceil_div(ch.max_keys, n), kernels::kGenKeyTile) *
                                  kernels::kGenKeyTile);
  sp.n_split = static_cast<int32_t>(ceil_div(ch.max_keys, sp.split));
  sp.row0 = static_cast<int32_t>(row0);
  const std::size_t ml = align_up(sizeof(float) * rows * p.n_q_heads * sp.n_split);
  auto* base = static_cast<char*>(p.workspace);
  sp.part_m = reinterpret_cast<float*>(base);
  sp.part_l = reinterpret_cast<float*>(base + ml);
  sp.part_o = reinterpret_cast<float*>(base + 2 * ml);
  return sp;
}

cudaError_t plan_chunk(const WindowAttentionParams& p, const WindowSeq* seqs, int32_t b,
                       Chunk* ch) {
  ch->b = b;
  // The decode path reads rows with 16-byte loads; other pointers take the generic path.
  bool decode = decode_dtype_and_dim(p) && aligned16(p.q) && aligned16(p.k_new) &&
                aligned16(p.v_new) && aligned16(p.ring_k) && aligned16(p.ring_v);
  for (int32_t i = 0; i < b; ++i) {
    const WindowSeq& s = seqs[i];
    ch->sb.seq[i] = kernels::SeqDesc{static_cast<int32_t>(s.q_row),
                                     static_cast<int32_t>(s.obs_offset), s.n_new, s.w, s.tail,
                                     s.ring};
    ch->max_new = std::max(ch->max_new, s.n_new);
    ch->max_keys = std::max(ch->max_keys, s.w + s.n_new);
    decode = decode && s.n_new == 1;
  }
  if (decode) {
    const cudaError_t e = dispatch_decode(p, [&]<typename T, int D>() {
      return plan_decode_t<T, D>(p, p.n_q_heads / p.n_kv_heads, b, ch->max_keys, &ch->plan);
    });
    if (e != cudaSuccess) return e;
  }
  if (ch->plan.path == WindowAttentionPath::kGeneric) ch->gen = plan_generic(p, seqs, *ch);
  return cudaSuccess;
}

cudaError_t launch_chunk(const WindowAttentionParams& p, const KernelArgs& a, const WindowSeq* seqs,
                         int32_t b, cudaStream_t stream) {
  Chunk ch;
  if (cudaError_t e = plan_chunk(p, seqs, b, &ch); e != cudaSuccess) return e;
  if (ch.plan.path != WindowAttentionPath::kGeneric)
    return dispatch_decode(p, [&]<typename T, int D>() {
      return launch_decode_t<T, D>(ch.plan, a, ch.sb, b, stream);
    });
  switch (p.dtype) {
    case DType::kFloat16:
      return launch_generic<__half>(a, ch.sb, ch.gen, b, ch.max_new, ch.max_keys, stream);
    case DType::kBFloat16:
      return launch_generic<__nv_bfloat16>(a, ch.sb, ch.gen, b, ch.max_new, ch.max_keys, stream);
    case DType::kFloat32: break;
  }
  return launch_generic<float>(a, ch.sb, ch.gen, b, ch.max_new, ch.max_keys, stream);
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
  (void)max_new;  // appends split their keys as far as a decode launch's workspace holds
  if (!valid_shape(p) || max_w < 0) return 0;
  // The largest layout of any decode launch of ≤ min(batch, 128) sequences (128 when batch is not
  // set) of ≤ max_w + 1 keys: the decode path's where it serves, the generic path's key split.
  const int64_t max_keys = int64_t{max_w} + 1;
  const int32_t b_max = p.batch > 0 ? std::min(p.batch, kMaxLaunchBatch) : kMaxLaunchBatch;
  const bool decode = decode_dtype_and_dim(p);
  std::size_t best = 0;
  for (int32_t b = 1; b <= b_max; ++b) {
    if (decode) {
      const DecodeSizes z = decode_sizes(b, p.n_q_heads, p.n_kv_heads, p.head_dim,
                                         max_splits(b, p.n_kv_heads, max_keys),
                                         (max_keys + 3) / 4 * 4);
      best = std::max(best, z.total);
    }
    const int64_t n = generic_slices(b, p.n_kv_heads, p.n_q_heads / p.n_kv_heads, 1, max_keys);
    if (n > 1) best = std::max(best, generic_split_bytes(b, p.n_q_heads, p.head_dim, n));
  }
  return best;
}

WindowAttentionPlan window_attention_plan(const WindowAttentionParams& p) {
  WindowAttentionPlan plan;
  if (p.batch <= 0 || !valid_shape(p) || p.seqs == nullptr) return plan;
  Chunk ch;
  if (plan_chunk(p, p.seqs, std::min(kMaxLaunchBatch, p.batch), &ch) != cudaSuccess) return plan;
  plan.path = ch.plan.path;
  plan.slices = ch.plan.path == WindowAttentionPath::kGeneric ? ch.gen.n_split : ch.plan.lay.n_split;
  plan.tail_sequences = ch.plan.tail_b;
  plan.tail_slices = ch.plan.tail_lay.n_split;
  return plan;
}

WindowAttentionPath window_attention_path(const WindowAttentionParams& p) {
  return window_attention_plan(p).path;
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
    const cudaError_t e =
        dispatch_decode(p, [&]<typename T, int D>() { return decode_setup<T, D>().error; });
    if (e != cudaSuccess) return e;
  }
  switch (p.dtype) {
    case DType::kFloat16: return generic_setup<__half>();
    case DType::kBFloat16: return generic_setup<__nv_bfloat16>();
    case DType::kFloat32: break;
  }
  return generic_setup<float>();
}

bool window_decode_path_serves(DType dtype, int32_t head_dim, int32_t group) {
  return (dtype == DType::kFloat16 || dtype == DType::kBFloat16) &&
         (head_dim == 64 || head_dim == 128 || head_dim == 256) && group <= 8;
}

}  // namespace hgca::gpu
