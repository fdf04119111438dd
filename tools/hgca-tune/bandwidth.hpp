// DRAM read bandwidth measured with the engine's own pool: each node's arena reads a buffer bound to
// that node, all nodes at once, with a working set much larger than the last-level cache.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cpu/pool.hpp"

namespace hgca::tune {

/// Runs body(node) inside every node's arena that has threads, all nodes at once; returns when all did.
void run_on_every_node(cpu::Pool& pool, const std::function<void(int)>& body);

struct DramResult {
  double gbps = 0.0;                  ///< all nodes together: bytes read / wall time (median run)
  std::vector<double> node_gbps;      ///< each node's own bytes / its own time in that run
};

/// One buffer per node, bound to it (or first-touched by its arena where binding is unsupported).
class DramBuffers {
 public:
  DramBuffers(std::shared_ptr<const cpu::Topology> topology, uint64_t bytes_per_node);
  ~DramBuffers();
  DramBuffers(const DramBuffers&) = delete;
  DramBuffers& operator=(const DramBuffers&) = delete;

  /// Writes every page from `pool`'s arenas (first touch on the right node, and never zeros).
  void fill(cpu::Pool& pool);
  /// Reads every node's buffer with its arena of `pool` (nodes with threads), `repeats` times and
  /// for at least `min_seconds`; returns the median run.
  DramResult measure(cpu::Pool& pool, int repeats, double min_seconds);
  uint64_t bytes_per_node() const { return bytes_; }
  bool bound() const { return bound_; }

 private:
  std::shared_ptr<const cpu::Topology> topology_;
  uint64_t bytes_;
  bool bound_ = true;
  std::vector<float*> buffers_;
};

}  // namespace hgca::tune
