// The host backend: the window lives in host memory and its dense attention runs on the CPU, so
// every stage of the method runs (and is testable) on a machine without a GPU.
#include <cstring>

#include "cpu/attention_host.hpp"
#include "dtype.hpp"
#include "merge/merge_host.hpp"
#include "runtime_backends.hpp"
#include "runtime_base.hpp"

namespace hgca {
namespace {

struct HostSequence final : SequenceState {
  std::vector<kvmgr::SequenceKv> layers;
};

class HostRuntime final : public RuntimeBase {
 public:
  using RuntimeBase::RuntimeBase;

  /// No GPU of its own: the nodes placement prefers are those of the machine's named GPU, if any.
  /// Its store memory is node-bound, not registered with any device.
  Status init(const Machine& machine) {
    if (Status s = init_cpu(machine, machine.gpu_pci_bus_id); !s) return s;
    return init_store_memory(machine, {});
  }

  Backend backend() const override { return Backend::kHost; }
  HostHandoff handoff() const override { return HostHandoff::kAuto; }

  Status attention(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                   const MutableTensorView& out, float* lse_out, void* /*stream*/) override {
    if (Status s = validate_call(layer, q, k, v, out, lse_out); !s) return s;
    if (Status s = reported_as(drain(), "attention: layer {}", layer); !s) return s;
    return guarded("attention", [&]() -> Status {
      detail::dispatch_dtype(opt_.dtype, [&]<typename T>(T) {
        attend<T>(layer, static_cast<const T*>(q.data), static_cast<const T*>(k.data),
                  static_cast<const T*>(v.data), static_cast<T*>(out.data), lse_out);
      });
      return Status::ok();
    });
  }

  Status read_kv(int32_t layer, SeqId id, void* k_out, void* v_out) const override {
    if (Status s = check_layer("read_kv", layer); !s) return s;
    const auto* seq = static_cast<const HostSequence*>(find(id));
    if (!seq) return error(StatusCode::kNotFound, "read_kv: seq_id = {} is unknown", id);
    if (!k_out || !v_out) return error(StatusCode::kInvalidArgument, "read_kv: {} is null", k_out ? "v_out" : "k_out");
    if (in_step_) return error(StatusCode::kFailedPrecondition, "read_kv: a step is open; read between end_step and begin_step");
    if (Status s = reported_as(drain(), "read_kv: layer {}, seq_id = {}", layer, id); !s) return s;
    const auto& kv = seq->layers[layer];
    const std::size_t head_bytes = static_cast<std::size_t>(opt_.head_dim) * elem_size_;
    const std::size_t row_bytes = head_bytes * opt_.n_kv_heads;
    auto* ko = static_cast<std::byte*>(k_out);
    auto* vo = static_cast<std::byte*>(v_out);
    const int64_t m = read_store(kv.dram(), ko, vo);
    for (int64_t i = 0; i < kv.window().size(); ++i) {
      const int64_t s = kv.window().slot(i);
      std::memcpy(ko + (m + i) * row_bytes, kv.window().k(s), row_bytes);
      std::memcpy(vo + (m + i) * row_bytes, kv.window().v(s), row_bytes);
    }
    return Status::ok();
  }

 private:
  std::unique_ptr<SequenceState> make_sequence(int32_t node) override {
    auto seq = std::make_unique<HostSequence>();
    seq->layers.reserve(static_cast<std::size_t>(opt_.n_layers));
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      seq->layers.emplace_back(window_tokens_, opt_.block_tokens, opt_.n_kv_heads, opt_.head_dim, elem_size_,
                               store_memory_, node);
    }
    return seq;
  }
  const kvmgr::DramStore& dram(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const HostSequence&>(seq).layers[layer].dram();
  }
  kvmgr::DramStore& dram(SequenceState& seq, int32_t layer) override {
    return static_cast<HostSequence&>(seq).layers[layer].dram();
  }
  int64_t window_size(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const HostSequence&>(seq).layers[layer].window().size();
  }
  kvmgr::DramStore::PreparedAppend step_blocks(const SequenceState& seq, int32_t layer, int32_t n_new) const override {
    const kvmgr::SequenceKv& kv = static_cast<const HostSequence&>(seq).layers[layer];
    return kv.dram().allocate_append(kv.evict_count(n_new));
  }
  /// Memory that ran out where a call went on without it (selection, a re-evaluation's publishing),
  /// for the next call that drains (report_later).
  void out_of_memory_later(const char* what, int32_t layer, const char* why) noexcept {
    try {
      report_later(error(StatusCode::kOutOfMemory, "attention: layer {}: {}: {}", layer, what, why));
    } catch (...) {  // no memory for the message: the code alone
      report_later(Status(StatusCode::kOutOfMemory, {}));
    }
  }
  static kvmgr::SequenceKv& kv(SequenceState* seq, int32_t layer) {
    return static_cast<HostSequence*>(seq)->layers[layer];
  }

  template <typename T>
  void attend(int32_t layer, const T* q, const T* k, const T* v, T* out, float* lse_out) {
    const StepBatch& step = *step_;
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim, g = hq / hkv;
    try {
      publish(step, layer);
    } catch (const std::bad_alloc& e) {  // StoreMemoryExhausted included
      out_of_memory_later("a re-evaluation was dropped, its context sets kept", layer, e.what());
    }

    // Partial states of the two sides, fp32: the window's (dense) and the context sets' (sparse).
    const std::size_t rows = static_cast<std::size_t>(step.tokens()) * hq;
    std::vector<float> o_window(rows * d), lse_window(rows), o_context(rows * d), lse_context(rows);
    // weights[i * hkv + h]: the MAW observation `a` for sequence i's window ∪ new entries.
    std::vector<std::vector<float>> weights(static_cast<std::size_t>(step.size()) * hkv);
    for (int32_t i = 0; i < step.size(); ++i) {
      const int64_t dense = kv(step.seqs[i], layer).window().size() + step.n_new[i];
      for (int32_t h = 0; h < hkv; ++h) weights[i * hkv + h].resize(static_cast<std::size_t>(dense));
    }

    sparse_attention(step, layer, q, o_context.data(), lse_context.data());
    // Per (sequence, KV head), in the sequence's node arena: dense and exact over the window, then
    // the new tokens causally; then the group's rows of both sides merge.
    for_each_by_node(step, hkv, [&](int32_t i, int32_t h) {
      const int32_t task = i * hkv + h;
      const auto& window = kv(step.seqs[i], layer).window();
      const int64_t row0 = step.offsets[i];
      const int64_t token_stride = static_cast<int64_t>(hkv) * d;
      std::vector<cpu::KvSegment<T>> segments;
      for (const auto& run : window.runs()) {
        if (run.count == 0) continue;
        segments.push_back({reinterpret_cast<const T*>(window.k(run.first_slot)) + h * d,
                            reinterpret_cast<const T*>(window.v(run.first_slot)) + h * d,
                            run.count, token_stride});
      }
      segments.push_back({k + row0 * token_stride + h * d, v + row0 * token_stride + h * d,
                          step.n_new[i], token_stride});
      cpu::GroupAttentionParams<T> p;
      p.q = q + row0 * hq * d + static_cast<int64_t>(h) * g * d;
      p.q_row_stride = static_cast<int64_t>(hq) * d;
      p.n_rows = step.n_new[i];
      p.group = g;
      p.head_dim = d;
      p.sm_scale = sm_scale_;
      p.segments = segments;
      p.causal_offset = window.size();
      p.o = o_window.data() + (row0 * hq + static_cast<int64_t>(h) * g) * d;
      p.o_row_stride = static_cast<int64_t>(hq) * d;
      p.lse = lse_window.data() + row0 * hq + static_cast<int64_t>(h) * g;
      p.lse_row_stride = hq;
      p.weights = weights[task].data();
      cpu::attend_group(p, sparse_engine_.isa());

      for (int64_t r = row0; r < row0 + step.n_new[i]; ++r) {  // the group's g rows of token r
        const int64_t at = r * hq + static_cast<int64_t>(h) * g;
        merge::merge_states(o_window.data() + at * d, lse_window.data() + at, o_context.data() + at * d,
                            lse_context.data() + at, g, d, out + at * d, lse_out ? lse_out + at : nullptr);
      }
    });

    // Re-evaluation judges the store as it was before this call's eviction (the entries this call
    // evicts were just weighed densely by the same queries).
    auto jobs = snapshot_reevaluations(step, layer, q);
    const kvmgr::SelectionParams sel = selection();
    // Every sequence prepares its commit (where memory can run out) before any of them changes, so
    // that a failed call leaves the whole batch as it was. The blocks are begin_step's; where the
    // context caches cannot grow, the evicted entries join the store unselected (not lost), and
    // the next call reports it.
    std::vector<kvmgr::SequenceKv::PreparedCommit> commits(static_cast<std::size_t>(step.size()));
    std::vector<std::string> unselected(static_cast<std::size_t>(step.size()));
    auto prepare = [&](int32_t i, bool select) {
      std::vector<const float*> w(static_cast<std::size_t>(hkv));
      for (int32_t h = 0; h < hkv; ++h) w[h] = weights[i * hkv + h].data();
      const int64_t token_stride = static_cast<int64_t>(hkv) * d;
      return kv(step.seqs[i], layer).prepare_commit(
          reinterpret_cast<const std::byte*>(k + step.offsets[i] * token_stride),
          reinterpret_cast<const std::byte*>(v + step.offsets[i] * token_stride), step.n_new[i], w, opt_.alpha, sel,
          step.seqs[i]->reserved[layer], select);
    };
    try {
      for_each_by_node(step, 1, [&](int32_t i, int32_t) {
        try {
          commits[i] = prepare(i, true);
        } catch (const kvmgr::StoreMemoryExhausted& e) {
          commits[i] = prepare(i, false);
          unselected[i] = e.what();
        }
      });
    } catch (...) {
      // Another sequence's failed the call: the blocks taken go back, for the call made again.
      for (int32_t i = 0; i < step.size(); ++i) {
        if (commits[i].append.count > 0) step.seqs[i]->reserved[layer] = std::move(commits[i].append);
      }
      throw;
    }
    // From here on nothing may fail the call: it changes the sequences.
    std::vector<uint8_t> applied(static_cast<std::size_t>(step.size()), 0);
    auto apply = [&](int32_t i) {
      if (std::string why = kv(step.seqs[i], layer).apply_commit(std::move(commits[i]), sel); !why.empty()) {
        unselected[i] = std::move(why);
      }
      applied[i] = 1;
    };
    try {
      for_each_by_node(step, 1, [&](int32_t i, int32_t) { apply(i); });
    } catch (const std::bad_alloc&) {  // no memory for the pool's tasks: the rest in this thread
      for (int32_t i = 0; i < step.size(); ++i) {
        if (!applied[i]) apply(i);
      }
    }
    layer_done_[layer] = 1;
    for (int32_t i = 0; i < step.size(); ++i) {
      if (!unselected[i].empty()) {
        out_of_memory_later("the evicted entries joined the store unselected", layer, unselected[i].c_str());
        break;
      }
    }
    try {
      start_reevaluations(step, layer, jobs);
    } catch (const std::bad_alloc& e) {  // StoreMemoryExhausted included
      out_of_memory_later("a re-evaluation was dropped, its context sets kept", layer, e.what());
    }
  }
};

}  // namespace

Status make_host_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out) {
  auto rt = std::make_unique<HostRuntime>(options);
  if (Status s = rt->init(machine); !s) return s;
  *out = std::move(rt);
  return Status::ok();
}

}  // namespace hgca
