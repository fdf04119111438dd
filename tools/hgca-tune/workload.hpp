// The sparse-attention workload hgca-tune sweeps: one decode step of a model-shaped batch over
// context sets (contiguous per-head K and V copies) placed on NUMA nodes, rotated over enough layers
// that the working set dwarfs the last-level cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/pool.hpp"
#include "hgca/hgca.hpp"

namespace hgca::tune {

struct WorkloadShape {
  int q_heads = 32;
  int kv_heads = 8;
  int head_dim = 128;
  DType dtype = DType::kBFloat16;
  int64_t context = 32768;        ///< store tokens per sequence
  double selected_fraction = 0.1; ///< mean |S| / context; per-head lengths spread over [0.25, 1.75] × it
  int batch = 4;
};

/// What the sweep varies (the tuned fields of hgca::Options).
struct EngineConfig {
  int threads_per_node = 0;
  int max_packed_heads = 0; ///< most small (sequence, KV head) items packed into one task; 0: as many as fit
  int kv_split_tokens = 0;  ///< 0: the engine chooses from the step's selected tokens
  CpuIsa isa = CpuIsa::kAuto;
  NumaPlacement placement = NumaPlacement::kAuto;
};

/// The engine the sweep calls, by name (for reports).
const char* engine_name();
/// ISA paths the engine offers on this CPU for `dtype` (kAuto first).
std::vector<CpuIsa> engine_isas(DType dtype);
/// What kAuto runs here.
std::string engine_auto_isa();

class SparseWorkload {
 public:
  /// Allocates and fills the context sets of `layers` layers (each sequence's on its node).
  SparseWorkload(const WorkloadShape& shape, int layers, std::vector<int> gpu_local_nodes);
  ~SparseWorkload();

  /// Places the sequences for `pool` and `placement` (moving only sequences whose node changes) and
  /// fills new pages from the owning node's arena.
  void place(cpu::Pool& pool, NumaPlacement placement);

  /// One decode step at `layer` (mod layers): every sequence's queries attend to their context sets
  /// in one engine call, split into tasks as `config` says. The one call the sweep times. Returns the
  /// load balance: the slowest worker's busy time over the mean.
  double step(cpu::Pool& pool, int layer, const EngineConfig& config);

  const WorkloadShape& shape() const { return shape_; }
  int layers() const { return layers_; }
  /// The layer the next measured step reads, moved on by one: the measurements go on round all the
  /// layers, so that a layer is read again only after all the others (together several times the
  /// last-level cache) and no step finds its data in cache.
  int next_layer() {
    const int l = next_layer_;
    next_layer_ = (next_layer_ + 1) % layers_;
    return l;
  }
  /// Selected K+V bytes one step reads (unpadded): the numerator of the engine's GB/s.
  uint64_t step_bytes(int layer) const;
  uint64_t total_bytes() const;  ///< all layers
  /// Bytes of one layer with the given mean fraction (for sizing the number of layers and checking
  /// the machine's memory), as a double: huge shapes must not wrap.
  static double layer_bytes_estimate(const WorkloadShape& shape);
  const std::vector<int>& node_of_sequence() const { return node_of_seq_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  WorkloadShape shape_;
  int next_layer_ = 0;
  int layers_;
  std::vector<int> gpu_local_;
  std::vector<int> node_of_seq_;
};

}  // namespace hgca::tune
