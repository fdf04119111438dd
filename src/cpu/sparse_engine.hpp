// The CPU engine's sparse attention (HGCA §3.3, "CPU-local sparse attention"): one call takes a
// whole step's work items — (sequence, KV head) pairs with their context caches — splits
// them into tasks balanced by selected tokens, and runs SIMD kernels chosen from CPUID on the pool.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cpu/arch/sparse_arch.hpp"
#include "hgca/hgca.hpp"
#include "kvmgr/context_segments.hpp"

namespace hgca::cpu {

/// Instruction-set path of the kernels. kAuto picks the best one the CPU has. kAvx512Bf16 is
/// kAvx512 plus AVX512-BF16 dot products (vdpbf16ps) for q·k when the KV dtype is bf16.
enum class SparseIsa : int32_t { kAuto = 0, kAvx512 = 1, kAvx2 = 2, kPortable = 3, kAvx512Bf16 = 4 };
const char* to_string(SparseIsa isa);
/// Whether this CPU (and this build) can run `isa`; kAuto and kPortable always can.
bool isa_supported(SparseIsa isa);
/// The path kAuto resolves to on this CPU.
SparseIsa best_isa();
/// The engine's path for Options::isa, and back.
SparseIsa to_sparse_isa(CpuIsa isa);
CpuIsa to_cpu_isa(SparseIsa isa);
/// The paths Options::isa may force on this CPU, best first (kAuto, which always runs, not listed).
std::vector<CpuIsa> supported_isas();

/// Adds a re-evaluation's weights over one KV head's keys to p.acc (arch::WeightsParams), with the
/// same SIMD kernels as the sparse attention, on `isa`'s path (kAuto: the best this CPU has), with
/// denormals flushed. Runs on the calling thread.
void add_key_weights(SparseIsa isa, DType dtype, const arch::WeightsParams& p);

/// One unit of dense attention (arch::UnitParams) on `isa`'s kernels, as add_key_weights: the host
/// backend's window part.
void attend_unit(SparseIsa isa, DType dtype, const arch::UnitParams& p);

/// One (sequence, KV head) of a step: the group's query rows attend to the n keys of the head's
/// context set S, [n, head_dim] each for K and V in the call's dtype: contiguous, or in segments.
struct SparseItem {
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t n = 0;               ///< |S|; 0 gives o = 0, lse = -inf
  const void* q = nullptr;     ///< row r, query head g of the group at q + r*q_row_stride + g*head_dim (elements)
  int64_t q_row_stride = 0;
  int32_t n_rows = 1;          ///< 1: decode; more: append (the new tokens of the sequence)
  float* o = nullptr;          ///< fp32, normalized over S; row r, head g at o + r*o_row_stride + g*head_dim
  int64_t o_row_stride = 0;
  float* lse = nullptr;        ///< natural log of Σ exp(scaled score); row r, head g at lse + r*lse_row_stride + g
  int64_t lse_row_stride = 0;
  int32_t node = 0;            ///< NUMA node whose arena works on this item (index into the arenas)
  /// Non-null: S lies in a context cache's segments (kvmgr/context_segments.hpp), segment s at
  /// segments[s], the first of segment_rows rows; k and v are segment 0's. The engine cuts it into
  /// the tasks of a contiguous set, and a task attends the runs it spans in one pass.
  const kvmgr::KvSegment* segments = nullptr;
  int64_t segment_rows = 0;
};

struct SparseEngineConfig {
  SparseIsa isa = SparseIsa::kAuto;
  /// Largest work of one task, in keys read: an item's work is its keys once per 16 of its queries
  /// (rows × G; a decode step's item: its keys). An item with more work is cut into pieces of about
  /// this size: by query rows first (appends: each block of rows attends all keys, nothing to
  /// merge), then by keys into chunks whose partial (o, lse) are merged exactly by LSE (wherever
  /// their segments end; an item cut by rows only up to 256 tasks). 0: chosen from the step's total
  /// work (never from the thread count, so results are the same at every thread count).
  int64_t kv_split_tokens = 0;
  /// Most adjacent small items ((sequence, KV head) pairs) packed into one task; 0: as many as fit
  /// in kv_split_tokens. Small items are always packed up to that budget, so the task count follows
  /// the step's selected tokens rather than batch × heads (HGCA's answer to oversubscription, §3.3).
  /// Packing never changes results, only the task count; the padding of merged heads that §3.3
  /// also describes is selection's business (Options::heads_per_task), not the engine's.
  int32_t max_packed_heads = 0;
};

/// The configuration the runtime gives its engine: `o`'s isa, kv_split_tokens and max_packed_heads.
SparseEngineConfig engine_config(const Options& o);

/// Optional measurements of one call, for benchmarks and hgca-tune.
struct SparseEngineStats {
  std::vector<double> busy_seconds;  ///< per worker slot of the arena: time spent in tasks (accumulated)
  int64_t tasks = 0;                 ///< tasks of the last call
  int64_t kv_split_tokens = 0;       ///< split size the last call used
  int64_t partial_bytes = 0;         ///< the last call's buffer for key chunks' partial (o, lse)
};

/// Sparse attention engine. attend() may be called from any thread, also one outside the arenas
/// (e.g. a CUDA host-function thread); it blocks until the step's items are done. Concurrent calls
/// on one engine are safe (it keeps no per-call state). Tasks run with denormals flushed (FTZ/DAZ,
/// restored after each task); chunks of a split item write cache-line-aligned partial buffers and
/// are merged by LSE in chunk order by whichever finishes last, so results are bitwise the same at
/// any thread count. Decode (n_rows = 1) and append (n_rows > 1) use the same kernel: blocks of 16
/// keys (64 when there are more than 8 query rows), up to 8 query rows (G heads × rows) dotted with
/// each K row while it is in registers.
class SparseEngine {
 public:
  explicit SparseEngine(SparseEngineConfig config = {});

  const SparseEngineConfig& config() const { return config_; }
  /// The ISA path the kernels run on (kAuto resolved).
  SparseIsa isa() const { return isa_; }

  /// Attends every item. group: query heads per KV head (G); head_dim: a multiple of 8 in [8, 256];
  /// sm_scale: score scale. All items run in `arena`.
  Status attend(DType dtype, int32_t group, int32_t head_dim, float sm_scale,
                std::span<const SparseItem> items, tbb::task_arena& arena,
                SparseEngineStats* stats = nullptr) const;

  /// As above, item i running in arenas[items[i].node] (one arena per NUMA node); the nodes' work
  /// runs concurrently.
  Status attend(DType dtype, int32_t group, int32_t head_dim, float sm_scale,
                std::span<const SparseItem> items, std::span<tbb::task_arena* const> arenas,
                SparseEngineStats* stats = nullptr) const;

  /// The split size a call over these items (of `group` query heads per KV head) would use.
  int64_t split_tokens(int32_t group, std::span<const SparseItem> items) const;

 private:
  SparseEngineConfig config_;
  SparseIsa isa_;
};

}  // namespace hgca::cpu
