// What both backends share: option and call validation, the step protocol, the NUMA pool with
// the sequences' placement on its nodes, the sequences' DRAM stores with their re-evaluations, and
// the CPU's sparse attention over the context sets.
#pragma once

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu/pool.hpp"
#include "cpu/sparse_engine.hpp"
#include "hgca/hgca.hpp"
#include "kvmgr/reevaluation.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"
#include "runtime_backends.hpp"
#include "status_error.hpp"

namespace hgca {

/// Checks every field; `backend` is checked against what this build and machine offer.
Status validate_options(const Options& o);

/// A live sequence: its length, its NUMA node and, per layer, the newest re-evaluation not yet
/// published and the store blocks reserved for the open step. Each backend derives its own with
/// the window and the store.
struct SequenceState {
  virtual ~SequenceState() = default;  // released through this base: the backend's part must go too
  int64_t length = 0;
  int32_t node = 0;  ///< where its CPU work runs (the node's arena) and its store belongs
  std::vector<std::shared_ptr<kvmgr::Reevaluation>> pending;
  /// The store blocks the open step's call at each layer takes (begin_step allocates them all, so
  /// that store memory running out fails begin_step, before any layer has changed).
  std::vector<kvmgr::DramStore::PreparedAppend> reserved;
};

/// The batch of one step, shared with the work it enqueues (which may run after the step ended).
struct StepBatch {
  std::vector<SequenceState*> seqs;
  std::vector<int32_t> n_new;
  std::vector<int64_t> offsets{0};  // row offset of each batch entry, then the total
  int64_t tokens() const { return offsets.back(); }
  int32_t size() const { return static_cast<int32_t>(seqs.size()); }
};

class RuntimeBase : public Runtime {
 public:
  explicit RuntimeBase(const Options& options);
  ~RuntimeBase() override;

  const Options& options() const override { return opt_; }
  Status cpu_stats(CpuStats* out) const override;
  Status sequence_node(SeqId id, int32_t* out) const override;
  Status add_sequence(SeqId id) override;
  Status release_sequence(SeqId id) override;
  Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) override;
  Status end_step() override;
  Status abort_step() override;
  Status layer_stats(int32_t layer, LayerStats* out) const override;
  Status sequence_length(SeqId id, int64_t* out) const override;
  Status store_memory_stats(std::vector<StoreMemoryStats>* out) const override;
  Status synchronize() override;

  /// The DRAM store of `id` at `layer` once the work enqueued so far has run (this waits for it),
  /// or the error that work met, as the query functions report it. For tests that look inside
  /// (FlashH2D's round trip).
  Status store(SeqId id, int32_t layer, const kvmgr::DramStore** out) const;

 protected:
  /// Builds the CPU side on `machine`: the pool (one arena per NUMA node, threads and
  /// threads_per_node as the options ask) and the nodes near the GPU `gpu_pci_bus_id` (none when
  /// empty or when hwloc does not see it), which placement prefers. Backends call it from their
  /// initialization, before anything else uses the pool.
  Status init_cpu(const Machine& machine, const std::string& gpu_pci_bus_id);

  // --- what a backend provides ---
  /// A new sequence's state; its CPU work runs on NUMA node `node` of pool_, and its DRAM stores
  /// live there, in store_memory_.
  virtual std::unique_ptr<SequenceState> make_sequence(int32_t node) = 0;
  virtual void drop_sequence(SequenceState& /*seq*/) {}
  virtual const kvmgr::DramStore& dram(const SequenceState& seq, int32_t layer) const = 0;
  virtual kvmgr::DramStore& dram(SequenceState& seq, int32_t layer) = 0;
  virtual int64_t window_size(const SequenceState& seq, int32_t layer) const = 0;
  /// The store blocks `seq`'s call at `layer` will take for n_new new tokens at the step boundary,
  /// allocated (empty when it needs none). Throws StoreMemoryExhausted.
  virtual kvmgr::DramStore::PreparedAppend step_blocks(const SequenceState& seq, int32_t layer, int32_t n_new) const = 0;
  /// Waits until everything enqueued has run (the state the query functions read is then final),
  /// then gives deferred_error().
  virtual Status drain() const { return deferred_error(); }
  /// The backend's own fields of LayerStats (transfer_seconds, overflow_*), filled after drain().
  virtual void backend_stats(int32_t /*layer*/, LayerStats* /*st*/) const {}

  /// Creates the store memory on the NUMA nodes of `machine` (the pool's), with the options' chunk size and limit
  /// and a backend's chunk registration (none: the host backend). Part of creating a backend.
  Status init_store_memory(const Machine& machine, kvmgr::ChunkRegistration registration);

  /// An error met by a call's host side after the call returned, for the next call that waits for
  /// that side. The first is kept, but one that stays replaces one reported only once.
  void report_later(Status s) const;
  /// That error. Memory running out is reported once (then cleared): the stores are as they were
  /// left (entries that could not be selected are kept unselected), and the caller must be able to
  /// go on, or release sequences to make room. Any other error stays: what follows it cannot be
  /// trusted.
  Status deferred_error() const;
  /// `s` (drain()'s or deferred_error()'s) as the call that met it reports it, that call named by
  /// `call` ("attention: layer {}"): it did nothing else. Memory that ran out says what to do.
  static Status reported_by(const std::string& call, const Status& s);
  /// reported_by() with the call's name formatted only on an error (attention passes here each call).
  template <typename... Args>
  static Status reported_as(Status s, fmt::format_string<Args...> call, Args&&... args) noexcept {
    if (s) return s;
    try {
      return reported_by(fmt::format(call, std::forward<Args>(args)...), s);
    } catch (...) {  // no memory for the message: the error as it was
      return s;
    }
  }

  /// Maps exceptions from allocation to a Status (memory running out named with `call`, the API
  /// call, where not null); nothing inside the runtime throws otherwise.
  template <typename F>
  static Status guarded(const char* call, F&& f) {
    try {
      return f();
    } catch (const kvmgr::StoreMemoryExhausted& e) {
      return error(StatusCode::kOutOfMemory, "{}{}{}", call ? call : "", call ? ": " : "", e.what());
    } catch (const std::bad_alloc&) {
      return error(StatusCode::kOutOfMemory, "{}{}host memory exhausted", call ? call : "", call ? ": " : "");
    } catch (const std::exception& e) {
      return error(StatusCode::kInternal, "{}", e.what());
    }
  }

  Status check_layer(const char* what, int32_t layer) const;
  /// The step's state, the tensors' shapes and dtypes, and that out and lse_out share no memory
  /// with q, k, v or each other (not whether the pointers point at memory).
  Status validate_call(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                       const MutableTensorView& out, const float* lse_out) const;
  SequenceState* find(SeqId id) const;
  /// Copies the store's entries, token-major [size, Hkv, D], to k_out and v_out; returns the count.
  int64_t read_store(const kvmgr::DramStore& store, std::byte* k_out, std::byte* v_out) const;

  kvmgr::SelectionParams selection() const { return {opt_.beta, opt_.min_keep, opt_.heads_per_task}; }
  /// Publishes the newest finished re-evaluation of the batch's sequences at `layer`. One that
  /// cannot get memory (its context caches: StoreMemoryExhausted) is dropped, its sequence's
  /// context sets as they were; the others still publish, and then the first failure is thrown.
  void publish(const StepBatch& batch, int32_t layer);
  void publish(SequenceState& seq, int32_t layer);

  /// The CPU's side of a step at `layer`: every (sequence, KV head)'s query rows attend to its
  /// context set. q [T, Hq, D] in the runtime dtype (host memory); o [T, Hq, D] and lse [T, Hq] fp32.
  /// Items (batch entry i, KV head h) with on_gpu[i·Hkv + h] set are the GPU's (the overflow
  /// policy): their rows get the empty side, o = 0 and lse = -inf.
  void sparse_attention(const StepBatch& batch, int32_t layer, const void* q, float* o, float* lse,
                        std::span<const uint8_t> on_gpu = {});

  /// Snapshots, for each batch entry that re-evaluates (an append of ≥ reeval_min_tokens with a
  /// non-empty store), its store as it is now; entries that do not are null.
  std::vector<std::shared_ptr<kvmgr::Reevaluation>> snapshot_reevaluations(const StepBatch& batch,
                                                                           int32_t layer, const void* q);
  /// Runs the snapshots (deterministic: now, publishing them; otherwise in the background arena of
  /// each sequence's node) and empties `jobs`: the sequences hold them until they publish, so a
  /// caller that lives on (a captured call's job) does not keep their store blocks.
  void start_reevaluations(const StepBatch& batch, int32_t layer,
                           std::vector<std::shared_ptr<kvmgr::Reevaluation>>& jobs);
  /// Waits for every node's running re-evaluations.
  void wait_reevaluations();

  /// Runs body(i, part) for every batch entry i and part in [0, parts), in parallel, each inside
  /// the arena of entry i's node (the nodes at once).
  template <typename F>
  void for_each_by_node(const StepBatch& batch, int32_t parts, F&& body) const {
    std::vector<std::vector<int32_t>> entries(pool_->arenas().size());
    for (int32_t i = 0; i < batch.size(); ++i) entries[static_cast<std::size_t>(batch.seqs[i]->node)].push_back(i);
    std::vector<int> nodes;
    for (std::size_t n = 0; n < entries.size(); ++n) {
      if (!entries[n].empty()) nodes.push_back(static_cast<int>(n));
    }
    cpu::run_in_arenas(pool_->arenas(), nodes, [&](int node) {
      const std::vector<int32_t>& mine = entries[static_cast<std::size_t>(node)];
      tbb::parallel_for(int32_t{0}, static_cast<int32_t>(mine.size()) * parts,
                        [&](int32_t t) { body(mine[static_cast<std::size_t>(t / parts)], t % parts); });
    });
  }

  const Options opt_;
  const float sm_scale_;
  const int64_t window_tokens_;
  const std::size_t elem_size_;
  const cpu::SparseEngine sparse_engine_;
  std::unique_ptr<cpu::Pool> pool_;  // set by init_cpu
  std::vector<int> gpu_local_nodes_;
  // Per node. Behind pointers: task_group's destructor may throw, and ours must not (it waits first).
  std::vector<std::unique_ptr<tbb::task_group>> reeval_tasks_;
  // The store blocks and context caches of every sequence (each store also holds a reference).
  std::shared_ptr<kvmgr::StoreMemory> store_memory_;
  std::unordered_map<SeqId, std::unique_ptr<SequenceState>> seqs_;

  // The open step.
  bool in_step_ = false;
  std::shared_ptr<const StepBatch> step_;
  std::vector<uint8_t> layer_done_;
  std::vector<int64_t> reevaluations_;

  mutable std::mutex error_mutex_;
  mutable Status async_error_;  // report_later's, guarded by error_mutex_
};

}  // namespace hgca
