// Dense exact attention over the per-layer GPU window ring plus the call's new tokens, with the LSE
// and the MAW observation (DESIGN.md steps 4 and 6, HGCA Algorithm 1 line 8). Host-only
// declarations: the runtime calls these without seeing CUDA types; `stream` is a cudaStream_t.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hgca/hgca.hpp"

namespace hgca::gpu {

/// Most batch entries one launch takes (they travel by value in the kernel parameters, so a
/// launch captured in a CUDA graph needs no per-step device metadata). Larger batches are split.
inline constexpr int32_t kMaxLaunchBatch = 128;

/// One sequence of the call.
struct WindowSeq {
  int64_t q_row = 0;       ///< first row of its new tokens in q, k_new, v_new, o, lse ([T, H, D])
  int64_t obs_offset = 0;  ///< its new entries' observations start at obs_new[obs_offset]
  int32_t n_new = 0;       ///< new tokens (≥ 1)
  int32_t w = 0;           ///< window entries before the call (≤ capacity)
  int32_t tail = 0;        ///< ring slot of the oldest window entry
  int32_t ring = 0;        ///< the sequence's ring in the layer's slab
};

/// The window ring of one layer: ring r, KV head h, slot s at
/// k[((r * n_kv_heads + h) * capacity + s) * head_dim], maw[(r * n_kv_heads + h) * capacity + s].
/// Window entry i (0 = oldest) of a sequence lives in slot (tail + i) % capacity.
struct WindowAttentionParams {
  DType dtype = DType::kBFloat16;  ///< of q, k_new, v_new, ring_k, ring_v: kFloat16 or kBFloat16
  int32_t n_q_heads = 0, n_kv_heads = 0, head_dim = 0;  ///< head_dim: multiple of 8 in [8, 256]
  int32_t capacity = 0;  ///< W, slots per ring
  float sm_scale = 1.0f;
  float alpha = 0.1f;

  const void* q = nullptr;      ///< [T, Hq, D]
  const void* k_new = nullptr;  ///< [T, Hkv, D]
  const void* v_new = nullptr;  ///< [T, Hkv, D]
  const void* ring_k = nullptr;
  const void* ring_v = nullptr;
  float* ring_maw = nullptr;    ///< window entries' MAW, blended in place: maw ← (1−α)·maw + α·a

  float* o = nullptr;    ///< [T, Hq, D] fp32, normalized over the keys the row sees
  float* lse = nullptr;  ///< [T, Hq] natural-log LSE of the scaled scores
  /// The new tokens' observation a: new token r of KV head h of sequence i at
  /// obs_new[seqs[i].obs_offset + h * seqs[i].n_new + r].
  float* obs_new = nullptr;

  const WindowSeq* seqs = nullptr;  ///< host array, `batch` entries (copied into the launch)
  int32_t batch = 0;
  void* workspace = nullptr;  ///< device scratch of window_attention_workspace_bytes()
  std::size_t workspace_bytes = 0;
};

/// Semantics, per sequence: its keys are the window entries (oldest first) then its n_new new
/// tokens; new row r (query heads of KV head h) sees keys [0, w + r + 1) (causal among the new
/// tokens). Scores are q·k × sm_scale. The observation a of key j is the max over the GQA group of
/// (1 / n_new) Σ_r softmax weight of j in row r (0 where r cannot see j).
///
/// Workspace bytes needed for a call whose sequences have at most `max_w` window entries and
/// `max_new` new tokens, `total_new` new tokens in all, `batch` sequences.
std::size_t window_attention_workspace_bytes(const WindowAttentionParams& p, int64_t total_new,
                                             int32_t max_w, int32_t max_new);

/// The kernels a launch runs: the generic path (append, prefill, fp32, other head dims), or decode
/// (every sequence brings one token) finished in thread-block clusters or by a combine kernel.
enum class WindowAttentionPath { kGeneric, kDecodeCombine, kDecodeCluster };

/// How launch_window_attention runs the call's first kMaxLaunchBatch sequences (it depends on the
/// device: ask where the launch would run).
struct WindowAttentionPlan {
  WindowAttentionPath path = WindowAttentionPath::kGeneric;  ///< kGeneric for an invalid call
  int32_t slices = 0;  ///< slices of each (sequence, KV head)'s keys (generic: per query block)
  int32_t tail_sequences = 0;  ///< cluster path: the batch's last sequences in a second launch
  int32_t tail_slices = 0;     ///< its slices per (sequence, KV head)
};
WindowAttentionPlan window_attention_plan(const WindowAttentionParams& p);
/// Whether the decode path serves this dtype, head dim and group at all (fp16/bf16, head dim 64,
/// 128 or 256, G ≤ 8); a call then takes it when every sequence brings one token and its rows are
/// 16-byte aligned.
bool window_decode_path_serves(DType dtype, int32_t head_dim, int32_t group);
/// window_attention_plan(p).path.
WindowAttentionPath window_attention_path(const WindowAttentionParams& p);

/// Enqueues the attention on `stream`; returns the CUDA error code (0: success) of the launches.
int launch_window_attention(const WindowAttentionParams& p, void* stream);

/// Loads every kernel launch_window_attention can take for p's dtype and head dim (decode and
/// generic paths) and does their setup on the current device (once per device), so that no later
/// call there (one inside a stream capture included) loads a module or sets an attribute. Only the
/// shape fields of `p` are read. Returns the CUDA error.
int load_window_attention_kernels(const WindowAttentionParams& p);

}  // namespace hgca::gpu
