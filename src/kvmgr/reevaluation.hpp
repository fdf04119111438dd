// Re-evaluation after an append (HGCA §3.2.2): the appended queries' weights over the whole store,
// computed asynchronously on a snapshot of the store and published by DramStore::apply_reevaluation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/sparse_engine.hpp"
#include "hgca/hgca.hpp"
#include "kvmgr/store.hpp"

namespace hgca::kvmgr {

struct Reevaluation {
  // Inputs: the store as it was before the append's own eviction, and the appended queries.
  std::vector<StoreBlocks> blocks;  // per KV head
  int64_t store_size = 0;
  int32_t block_tokens = 0;
  std::vector<std::byte> q;         // [n_rows, Hq, D] in `dtype`
  int32_t n_rows = 0, group = 1, head_dim = 0;
  float sm_scale = 1.0f;
  DType dtype = DType::kFloat32;
  cpu::SparseIsa isa = cpu::SparseIsa::kAuto;  // the kernels' path (the runtime's engine's)
  // Output: per KV head, per store entry, max over the group of the mean weight over the rows.
  std::vector<std::vector<float>> weights;
  std::atomic<bool> done{false};
};

/// Snapshots `store` and copies the n_rows query rows at `q` ([n_rows, Hq, D]); the job runs on
/// `isa`'s kernels.
std::shared_ptr<Reevaluation> snapshot_for_reevaluation(const DramStore& store, const std::byte* q,
                                                        int32_t n_rows, int32_t n_q_heads,
                                                        int32_t head_dim, float sm_scale,
                                                        DType dtype, cpu::SparseIsa isa = cpu::SparseIsa::kAuto);

/// Computes job.weights and sets job.done (safe to run on any thread; its tasks run in the
/// calling thread's arena). When host memory runs out it leaves job.done false: the job is
/// dropped, the store keeps its selection.
void run_reevaluation(Reevaluation& job) noexcept;

}  // namespace hgca::kvmgr
