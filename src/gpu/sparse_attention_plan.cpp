// Host side of the GPU sparse attention: the launch plan (tiles, key splits), the workspace layout
// and the argument check. Pure C++, built with or without CUDA, so that it is tested everywhere.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "gpu/sparse_attention.hpp"

namespace hgca::gpu {
namespace {

/// A block's fixed work (query load, reductions, outputs) in keys' time; the window's decode path
/// uses the same figure.
constexpr int64_t kBlockCostKeys = 160;
constexpr int32_t kMaxTiles = 65535;  // grid y

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int32_t tile_pairs_for(int64_t pairs) {
  int32_t t = 1;
  while (t < pairs && t < kMaxSparseTilePairs) t *= 2;
  return t;
}

}  // namespace

SparseAttentionPlan plan_sparse_attention(const SparseAttentionShape& shape, int32_t group, int32_t sm_count) {
  SparseAttentionPlan plan;
  const int64_t pairs = std::max<int64_t>(1, int64_t{std::max(shape.max_rows, 1)} * std::max(group, 1));
  plan.tile_pairs = tile_pairs_for(pairs);
  const int64_t tiles = ceil_div(pairs, plan.tile_pairs);
  plan.tiles = static_cast<int32_t>(std::min<int64_t>(tiles, kMaxTiles));
  const int64_t items = std::max(shape.n_items, 1);
  const int64_t max_n = std::max<int64_t>(shape.max_n, 0);
  const int64_t total_n = std::clamp<int64_t>(shape.total_n, max_n, std::numeric_limits<int64_t>::max() / 2);
  if (pairs > kMaxSparseSplitPairs || max_n <= kSparseChunkGranule) return plan;

  // Time of s splits, in keys' time of one block: the waves of the average block (the block count
  // over the resident blocks, rounded up), or the longest chunk alone when one long set among short
  // ones is what holds the step. Short items get fewer chunks than s (whole granules), so the block
  // count follows the chunk size rather than items × s. The combine costs about a block more.
  const int64_t slots = int64_t{std::max(sm_count, 1)} * sparse_blocks_per_sm(plan.tile_pairs);
  auto cost = [&](int32_t s) {
    const int64_t chunk = ceil_div(ceil_div(max_n, s), kSparseChunkGranule) * kSparseChunkGranule;
    const int64_t blocks = tiles * std::min(items * s, ceil_div(total_n, chunk) + items);
    const double average = static_cast<double>(tiles) * static_cast<double>(total_n) / static_cast<double>(blocks);
    const double waves = static_cast<double>(ceil_div(blocks, slots)) * (average + kBlockCostKeys);
    return std::max(waves, static_cast<double>(chunk + kBlockCostKeys)) + (s > 1 ? kBlockCostKeys : 0);
  };
  double best = cost(1);
  int32_t best_s = 1;
  for (int32_t s = 2; s <= kMaxSparseSplits; ++s) {
    if (const double c = cost(s); c < best) {  // ties keep fewer splits
      best = c;
      best_s = s;
    }
  }
  if (best_s > 1) {
    plan.kv_splits = best_s;
    plan.split_pairs = static_cast<int32_t>(pairs);
  }
  return plan;
}

std::size_t sparse_partials_offset(const SparseAttentionPlan& plan, int32_t n_items) {
  const auto slots = static_cast<std::size_t>(std::max(n_items, 0)) * plan.split_pairs * plan.kv_splits;
  return (slots * 2 * sizeof(float) + 255) / 256 * 256;
}

std::size_t sparse_attention_workspace_bytes(const SparseAttentionPlan& plan, int32_t n_items, int32_t head_dim) {
  if (plan.kv_splits <= 1 || plan.split_pairs <= 0 || n_items <= 0) return 0;
  const auto slots = static_cast<std::size_t>(n_items) * plan.split_pairs * plan.kv_splits;
  return sparse_partials_offset(plan, n_items) + slots * std::max(head_dim, 0) * sizeof(float);
}

Status check_sparse_attention(const SparseAttentionParams& p, std::span<const SparseAttentionItem> host_items) {
  constexpr auto kInvalid = StatusCode::kInvalidArgument;
  if (p.dtype != DType::kFloat32 && p.dtype != DType::kFloat16 && p.dtype != DType::kBFloat16) {
    return {kInvalid, fmt::format("dtype = {}, expected f32, f16 or bf16", static_cast<int>(p.dtype))};
  }
  if (p.group < 1 || p.group > 8) {
    return {StatusCode::kUnsupported, fmt::format("group = {}, expected 1 to 8 query heads per KV head", p.group)};
  }
  if (p.head_dim < 8 || p.head_dim > 256 || p.head_dim % 8 != 0) {
    return {StatusCode::kUnsupported, fmt::format("head_dim = {}, expected a multiple of 8 in [8, 256]", p.head_dim)};
  }
  if (!(p.sm_scale > 0.0f) || !std::isfinite(p.sm_scale)) {
    return {kInvalid, fmt::format("sm_scale = {}, expected a finite value > 0", p.sm_scale)};
  }
  if (p.n_items < 0) return {kInvalid, fmt::format("n_items = {}, expected ≥ 0", p.n_items)};
  if (p.n_items > 0 && p.items == nullptr) {
    return {kInvalid, fmt::format("items is null with n_items = {}, expected device-readable items", p.n_items)};
  }
  const SparseAttentionPlan& pl = p.plan;
  if (pl.tile_pairs != 1 && pl.tile_pairs != 2 && pl.tile_pairs != 4 && pl.tile_pairs != 8) {
    return {kInvalid, fmt::format("plan.tile_pairs = {}, expected 1, 2, 4 or 8", pl.tile_pairs)};
  }
  if (pl.tiles < 1 || pl.tiles > kMaxTiles) {
    return {kInvalid, fmt::format("plan.tiles = {}, expected 1 to {}", pl.tiles, kMaxTiles)};
  }
  if (pl.kv_splits < 1 || pl.kv_splits > kMaxSparseSplits) {
    return {kInvalid, fmt::format("plan.kv_splits = {}, expected 1 to {}", pl.kv_splits, kMaxSparseSplits)};
  }
  if (pl.split_pairs < 0 || pl.split_pairs > kMaxSparseSplitPairs) {
    return {kInvalid, fmt::format("plan.split_pairs = {}, expected 0 to {}", pl.split_pairs, kMaxSparseSplitPairs)};
  }
  const std::size_t need = sparse_attention_workspace_bytes(pl, p.n_items, p.head_dim);
  if (p.workspace_bytes < need || (need > 0 && p.workspace == nullptr)) {
    return {kInvalid, fmt::format("workspace_bytes = {} (workspace {}), expected ≥ {} bytes of device memory for "
                                  "{} items × {} pairs × {} splits", p.workspace_bytes, p.workspace, need,
                                  p.n_items, pl.split_pairs, pl.kv_splits)};
  }
  if (need > 0 && reinterpret_cast<std::uintptr_t>(p.workspace) % 16 != 0) {
    return {kInvalid, fmt::format("workspace = {}, expected 16-byte alignment", p.workspace)};
  }
  if (!host_items.empty() && host_items.size() != static_cast<std::size_t>(p.n_items)) {
    return {kInvalid, fmt::format("host_items has {} items, expected n_items = {}", host_items.size(), p.n_items)};
  }
  const int64_t row = int64_t{p.group} * p.head_dim;
  for (std::size_t i = 0; i < host_items.size(); ++i) {
    const SparseAttentionItem& it = host_items[i];
    if (it.n < 0 || it.n_rows < 1) {
      return {kInvalid,
              fmt::format("items[{}]: n = {}, n_rows = {}, expected n ≥ 0 and n_rows ≥ 1", i, it.n, it.n_rows)};
    }
    for (const auto& [name, ptr, needed] : {std::tuple{"q", static_cast<const void*>(it.q), true},
                                            {"o", it.o, true},
                                            {"lse", it.lse, true},
                                            {"k", it.k, it.n > 0},
                                            {"v", it.v, it.n > 0}}) {
      if (needed && !ptr) {
        return {kInvalid, fmt::format("items[{}].{} is null, expected a device pointer{}", i, name,
                                      it.n > 0 ? fmt::format(" (n = {})", it.n) : "")};
      }
    }
    if (it.segments && it.segment_rows <= 0) {
      return {kInvalid, fmt::format("items[{}]: segment_rows = {} with segments, expected > 0", i, it.segment_rows)};
    }
    if (it.n_rows > 1 && (it.q_row_stride < row || it.o_row_stride < row || it.lse_row_stride < p.group)) {
      return {kInvalid, fmt::format("items[{}]: q_row_stride = {}, o_row_stride = {}, lse_row_stride = {}, expected "
                                    "≥ {}, ≥ {}, ≥ {} (rows must not overlap)", i, it.q_row_stride, it.o_row_stride,
                                    it.lse_row_stride, row, row, p.group)};
    }
  }
  return Status::ok();
}

}  // namespace hgca::gpu
