// The end of a CUDA attention call for the window (DESIGN.md steps 1–2): the MAW of the entries
// that leave is written to the host's staging (their K/V are already there: FlashD2H copies every
// call's new rows to the host as they arrive), then the new tokens that stay are inserted into the
// ring. Host-only declarations; `stream` is a cudaStream_t.
#pragma once

#include <cstdint>

#include "gpu/window_attention.hpp"
#include "hgca/hgca.hpp"

namespace hgca::gpu {

/// One sequence of the call. Its dense entries are the w window entries (oldest first) then its
/// n_new new tokens; the first `evict` of them leave.
struct CommitSeq {
  int64_t q_row = 0;        ///< first row of its new tokens in k_new, v_new
  int64_t obs_offset = 0;   ///< as WindowSeq::obs_offset
  int64_t staging_row = 0;  ///< evicted entries of the call's earlier sequences
  int32_t n_new = 0, w = 0, tail = 0, ring = 0;
  int32_t evict = 0;
};

/// Ring layout as WindowAttentionParams. Sequence i's evicted MAW goes to
/// staging_maw[staging_row * Hkv] as [Hkv, evict] (as the DRAM store takes it).
struct WindowCommitParams {
  DType dtype = DType::kBFloat16;
  int32_t n_kv_heads = 0, head_dim = 0, capacity = 0;
  const void* k_new = nullptr;
  const void* v_new = nullptr;
  void* ring_k = nullptr;
  void* ring_v = nullptr;
  float* ring_maw = nullptr;        ///< already blended by the attention for the window entries
  const float* obs_new = nullptr;   ///< the new tokens' first observation (their starting MAW)
  float* staging_maw = nullptr;     ///< mapped pinned host memory: written in place, no copy
  const CommitSeq* seqs = nullptr;  ///< host array, `batch` entries (copied into the launch)
  int32_t batch = 0;
};

/// Writes every sequence's evicted entries' MAW (blended by this call's attention) to staging_maw.
int launch_evicted_maw(const WindowCommitParams& p, void* stream);
/// Writes the new tokens that stay into their ring slots with their MAW (after launch_evicted_maw:
/// the slots may be the evicted ones).
int launch_window_insert(const WindowCommitParams& p, void* stream);
/// Loads both kernels, so that no later launch (one inside a stream capture included) loads a
/// module. Returns the CUDA error.
int load_window_commit_kernels();

}  // namespace hgca::gpu
