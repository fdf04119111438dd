// The built-in synthetic workload: model-shaped q/k/v with salient tokens, chunked prefill, then decode.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca::decode {

struct SyntheticWorkload {
  int32_t batch = 2;            ///< sequences decoded together
  int32_t context = 2048;       ///< prompt tokens per sequence, fed as chunked prefill
  int32_t chunk = 256;          ///< tokens per append step of the prefill
  int32_t decode_steps = 64;    ///< one-token steps after the prefill
  float salient_fraction = 0.03f;  ///< share of keys that lie along their head's topic direction
  uint64_t seed = 1;

  int32_t prefill_steps() const { return static_cast<int32_t>((int64_t{context} + chunk - 1) / chunk); }
  /// Positions each sequence runs: the prompt, then one per decode step.
  int64_t positions() const { return int64_t{context} + decode_steps; }
};

struct SyntheticTimes {
  int32_t prefill_steps = 0;
  double prefill_seconds = 0.0;
  std::vector<double> decode_seconds;  ///< wall time of each decode step of the batch
  /// Of each decode step, the time until end_step returned (the calling thread's share; the rest
  /// is waiting for the stream).
  std::vector<double> decode_enqueue_seconds;
  /// LayerStats::transfer_seconds summed over the layers, accrued during the decode steps.
  double decode_transfer_seconds = 0.0;
  /// Store memory chunks that allocations took from the OS themselves during the decode steps
  /// (StoreMemoryStats::sync_growths): a step that grew the store while it ran.
  int64_t decode_sync_growths = 0;
};

/// The runtime's store memory, every NUMA node's summed (node = -1); waits for enqueued work.
Status store_memory_total(const Runtime& runtime, StoreMemoryStats* out);

/// Runs `workload` through `runtime` (its Options give layers, heads, head dim and dtype) with
/// sequence ids 0..batch-1, which stay live afterwards so the caller can read layer_stats.
/// `on_step(positions)` is called after each step with the positions each sequence has run so far
/// (out of workload.positions()): the prefill takes most of the time, so steps would misreport it.
/// Only begin_step..end_step is timed; making the inputs is not.
Status run_synthetic(Runtime& runtime, const SyntheticWorkload& workload,
                     const std::function<void(int64_t positions)>& on_step, SyntheticTimes* out);

}  // namespace hgca::decode
