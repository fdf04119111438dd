// The runtime: validates each call, then runs one attention call's stages — attend (dense over the
// window and the new tokens, sparse over the context sets), merge, track/evict/select, re-evaluate.
// This is the host backend: the window lives in host memory and its dense attention runs on the CPU.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cmath>
#include <new>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "cpu/attention_host.hpp"
#include "cpu/sparse_engine.hpp"
#include "dtype.hpp"
#include "hgca/hgca.hpp"
#include "kvmgr/reevaluation.hpp"
#include "kvmgr/store.hpp"
#include "merge/merge_host.hpp"
#include "options_json.hpp"

namespace hgca {
namespace {

template <typename... Args>
Status error(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return {code, fmt::format(format, std::forward<Args>(args)...)};
}

Status validate(const Options& o) {
  using enum StatusCode;
  if (o.n_layers < 1) return error(kInvalidArgument, "n_layers = {}, expected ≥ 1", o.n_layers);
  if (o.n_q_heads < 1) return error(kInvalidArgument, "n_q_heads = {}, expected ≥ 1", o.n_q_heads);
  if (o.n_kv_heads < 1 || o.n_q_heads % o.n_kv_heads != 0) {
    return error(kInvalidArgument, "n_kv_heads = {}, expected ≥ 1 and dividing n_q_heads = {}",
                 o.n_kv_heads, o.n_q_heads);
  }
  if (o.head_dim < 8 || o.head_dim > 256 || o.head_dim % 8 != 0) {
    return error(kUnsupported, "head_dim = {}, expected a multiple of 8 in [8, 256]", o.head_dim);
  }
  if (o.dtype != DType::kFloat32 && o.dtype != DType::kFloat16 && o.dtype != DType::kBFloat16) {
    return error(kInvalidArgument, "dtype = {}, expected f32, f16 or bf16", static_cast<int>(o.dtype));
  }
  if (!(o.sm_scale >= 0.0f) || !std::isfinite(o.sm_scale)) {
    return error(kInvalidArgument, "sm_scale = {}, expected finite ≥ 0 (0: 1/sqrt(head_dim))", o.sm_scale);
  }
  if (o.window_blocks < 1) return error(kInvalidArgument, "window_blocks = {}, expected ≥ 1", o.window_blocks);
  if (o.block_tokens < 1) return error(kInvalidArgument, "block_tokens = {}, expected ≥ 1", o.block_tokens);
  if (static_cast<int64_t>(o.window_blocks) * o.block_tokens > (int64_t{1} << 24)) {
    return error(kInvalidArgument, "window_blocks × block_tokens = {}, expected ≤ 2^24 tokens",
                 static_cast<int64_t>(o.window_blocks) * o.block_tokens);
  }
  if (!(o.alpha > 0.0f && o.alpha <= 1.0f)) return error(kInvalidArgument, "alpha = {}, expected in (0, 1]", o.alpha);
  if (!(o.beta >= 0.0f) || !std::isfinite(o.beta)) {
    return error(kInvalidArgument, "beta = {}, expected finite ≥ 0", o.beta);
  }
  if (o.min_keep < 0) return error(kInvalidArgument, "min_keep = {}, expected ≥ 0", o.min_keep);
  if (o.reeval_min_tokens < 1) {
    return error(kInvalidArgument, "reeval_min_tokens = {}, expected ≥ 1", o.reeval_min_tokens);
  }
  if (o.heads_per_task < 1 || o.heads_per_task > o.n_kv_heads) {
    return error(kInvalidArgument, "heads_per_task = {}, expected in [1, n_kv_heads = {}]",
                 o.heads_per_task, o.n_kv_heads);
  }
  if (o.threads < 0) return error(kInvalidArgument, "threads = {}, expected ≥ 0 (0: all cores)", o.threads);
  switch (o.backend) {
    case Backend::kAuto:
    case Backend::kHost: break;
    case Backend::kCuda:
      return error(kUnsupported, "backend = cuda: this build has the host backend only "
                                 "(the CUDA window kernels are not implemented yet); use auto or host");
    default: return error(kInvalidArgument, "backend = {}, expected auto, host or cuda", static_cast<int>(o.backend));
  }
  return validate_tuning(o);
}

class HostRuntime final : public Runtime {
 public:
  explicit HostRuntime(const Options& options)
      : opt_(options),
        sm_scale_(options.sm_scale > 0.0f ? options.sm_scale
                                          : 1.0f / std::sqrt(static_cast<float>(options.head_dim))),
        window_tokens_(static_cast<int64_t>(options.window_blocks) * options.block_tokens),
        elem_size_(dtype_size(options.dtype)),
        arena_(options.threads > 0 ? options.threads : tbb::task_arena::automatic),
        layer_done_(static_cast<std::size_t>(options.n_layers), 0),
        reevaluations_(static_cast<std::size_t>(options.n_layers), 0) {}

  ~HostRuntime() override {
    arena_.execute([&] { reeval_tasks_->wait(); });
  }

  const Options& options() const override { return opt_; }
  Backend backend() const override { return Backend::kHost; }

  Status add_sequence(SeqId id) override {
    return guarded([&]() -> Status {
      if (in_step_) return error(StatusCode::kFailedPrecondition, "add_sequence: seq_id = {}: a step is open; add sequences between end_step and begin_step", id);
      if (seqs_.contains(id)) return error(StatusCode::kInvalidArgument, "add_sequence: seq_id = {} already exists", id);
      auto seq = std::make_unique<Sequence>();
      seq->layers.reserve(static_cast<std::size_t>(opt_.n_layers));
      for (int32_t l = 0; l < opt_.n_layers; ++l) {
        seq->layers.emplace_back(window_tokens_, opt_.block_tokens, opt_.n_kv_heads, opt_.head_dim, elem_size_);
      }
      seq->pending.resize(static_cast<std::size_t>(opt_.n_layers));
      seqs_.emplace(id, std::move(seq));
      return Status::ok();
    });
  }

  Status release_sequence(SeqId id) override {
    if (in_step_) return error(StatusCode::kFailedPrecondition, "release_sequence: seq_id = {}: a step is open; release sequences between end_step and begin_step", id);
    // A re-evaluation still running keeps its own snapshot alive; its result is dropped.
    if (seqs_.erase(id) == 0) return error(StatusCode::kNotFound, "release_sequence: seq_id = {} is unknown", id);
    return Status::ok();
  }

  Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) override {
    return guarded([&]() -> Status {
      using enum StatusCode;
      if (in_step_) return error(kFailedPrecondition, "begin_step: the previous step was not ended (call end_step first)");
      if (seq_ids.empty()) return error(kInvalidArgument, "begin_step: seq_ids is empty, expected ≥ 1 sequence");
      if (seq_ids.size() != n_new.size()) {
        return error(kInvalidArgument, "begin_step: n_new.size() = {}, expected {} (one per seq_id)", n_new.size(), seq_ids.size());
      }
      std::vector<Sequence*> batch;
      std::vector<int64_t> offsets{0};
      std::unordered_set<SeqId> seen;
      for (std::size_t i = 0; i < seq_ids.size(); ++i) {
        auto it = seqs_.find(seq_ids[i]);
        if (it == seqs_.end()) return error(kNotFound, "begin_step: seq_ids[{}] = {} is unknown (add_sequence first)", i, seq_ids[i]);
        if (!seen.insert(seq_ids[i]).second) return error(kInvalidArgument, "begin_step: seq_ids[{}] = {} appears twice", i, seq_ids[i]);
        if (n_new[i] < 1) return error(kInvalidArgument, "begin_step: n_new[{}] = {}, expected ≥ 1", i, n_new[i]);
        batch.push_back(it->second.get());
        offsets.push_back(offsets.back() + n_new[i]);
      }
      batch_ = std::move(batch);
      offsets_ = std::move(offsets);
      n_new_.assign(n_new.begin(), n_new.end());
      std::fill(layer_done_.begin(), layer_done_.end(), 0);
      in_step_ = true;
      return Status::ok();
    });
  }

  Status attention(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                   const MutableTensorView& out, float* lse_out) override {
    if (Status s = validate_call(layer, q, k, v, out); !s) return s;
    return guarded([&]() -> Status {
      detail::dispatch_dtype(opt_.dtype, [&]<typename T>(T) {
        attend<T>(layer, static_cast<const T*>(q.data), static_cast<const T*>(k.data),
                  static_cast<const T*>(v.data), static_cast<T*>(out.data), lse_out);
      });
      layer_done_[layer] = 1;
      return Status::ok();
    });
  }

  Status end_step() override {
    if (!in_step_) return error(StatusCode::kFailedPrecondition, "end_step: no step is open (call begin_step first)");
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      if (!layer_done_[l]) {
        return error(StatusCode::kFailedPrecondition, "end_step: layer {} was not attended in this step (every layer once per step)", l);
      }
    }
    for (std::size_t i = 0; i < batch_.size(); ++i) batch_[i]->length += n_new_[i];
    in_step_ = false;
    batch_.clear();
    return Status::ok();
  }

  Status layer_stats(int32_t layer, LayerStats* out) const override {
    if (Status s = check_layer("layer_stats", layer); !s) return s;
    if (!out) return error(StatusCode::kInvalidArgument, "layer_stats: out is null");
    LayerStats st;
    st.context_tokens.assign(static_cast<std::size_t>(opt_.n_kv_heads), 0);
    int64_t context_total = 0;
    for (const auto& [id, seq] : seqs_) {
      const auto& kv = seq->layers[layer];
      ++st.sequences;
      st.window_tokens += kv.window().size();
      st.window_capacity += window_tokens_;
      st.store_tokens += kv.store_size();
      for (int32_t h = 0; h < opt_.n_kv_heads; ++h) {
        st.context_tokens[h] += kv.store(h).context.size();
        context_total += kv.store(h).context.size();
      }
    }
    if (st.store_tokens > 0) {
      st.selected_fraction = static_cast<double>(context_total) /
                             (static_cast<double>(st.store_tokens) * opt_.n_kv_heads);
    }
    st.reevaluations = reevaluations_[layer];
    *out = std::move(st);
    return Status::ok();
  }

  Status sequence_length(SeqId id, int64_t* out) const override {
    auto it = seqs_.find(id);
    if (it == seqs_.end()) return error(StatusCode::kNotFound, "sequence_length: seq_id = {} is unknown", id);
    if (!out) return error(StatusCode::kInvalidArgument, "sequence_length: out is null");
    *out = it->second->length;
    return Status::ok();
  }

  Status read_kv(int32_t layer, SeqId id, void* k_out, void* v_out) const override {
    if (Status s = check_layer("read_kv", layer); !s) return s;
    auto it = seqs_.find(id);
    if (it == seqs_.end()) return error(StatusCode::kNotFound, "read_kv: seq_id = {} is unknown", id);
    if (!k_out || !v_out) return error(StatusCode::kInvalidArgument, "read_kv: k_out and v_out must not be null");
    if (in_step_) return error(StatusCode::kFailedPrecondition, "read_kv: a step is open; read between end_step and begin_step");
    const auto& kv = it->second->layers[layer];
    const std::size_t head_bytes = static_cast<std::size_t>(opt_.head_dim) * elem_size_;
    const std::size_t row_bytes = head_bytes * opt_.n_kv_heads;
    auto* ko = static_cast<std::byte*>(k_out);
    auto* vo = static_cast<std::byte*>(v_out);
    const int64_t m = kv.store_size();
    for (int64_t t = 0; t < m; ++t) {
      for (int32_t h = 0; h < opt_.n_kv_heads; ++h) {
        std::memcpy(ko + t * row_bytes + h * head_bytes, kv.store_k(h, t), head_bytes);
        std::memcpy(vo + t * row_bytes + h * head_bytes, kv.store_v(h, t), head_bytes);
      }
    }
    for (int64_t i = 0; i < kv.window().size(); ++i) {
      const int64_t s = kv.window().slot(i);
      std::memcpy(ko + (m + i) * row_bytes, kv.window().k(s), row_bytes);
      std::memcpy(vo + (m + i) * row_bytes, kv.window().v(s), row_bytes);
    }
    return Status::ok();
  }

  Status synchronize() override {
    return guarded([&]() -> Status {
      arena_.execute([&] { reeval_tasks_->wait(); });
      for (auto& [id, seq] : seqs_) {
        for (int32_t l = 0; l < opt_.n_layers; ++l) publish(*seq, l);
      }
      return Status::ok();
    });
  }

 private:
  struct Sequence {
    int64_t length = 0;
    std::vector<kvmgr::SequenceKv> layers;
    std::vector<std::shared_ptr<kvmgr::Reevaluation>> pending;  // per layer, newest launched
  };

  /// Maps exceptions from allocation to a Status; nothing inside the runtime throws otherwise.
  template <typename F>
  Status guarded(F&& f) {
    try {
      return f();
    } catch (const std::bad_alloc&) {
      return error(StatusCode::kOutOfMemory, "host memory exhausted");
    } catch (const std::exception& e) {
      return error(StatusCode::kInternal, "{}", e.what());
    }
  }

  Status check_layer(const char* what, int32_t layer) const {
    if (layer < 0 || layer >= opt_.n_layers) {
      return error(StatusCode::kInvalidArgument, "{}: layer = {}, expected in [0, {})", what, layer, opt_.n_layers);
    }
    return Status::ok();
  }

  Status validate_call(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                       const MutableTensorView& out) const {
    using enum StatusCode;
    if (!in_step_) return error(kFailedPrecondition, "attention: no step is open (call begin_step first)");
    if (Status s = check_layer("attention", layer); !s) return s;
    if (layer_done_[layer]) return error(kFailedPrecondition, "attention: layer = {} was already attended in this step (every layer once per step)", layer);
    const int64_t t = offsets_.back();
    struct Arg {
      const char* name;
      const void* data;
      DType dtype;
      std::array<int64_t, 3> shape, expected;
    };
    const Arg args[] = {
        {"q", q.data, q.dtype, q.shape, {t, opt_.n_q_heads, opt_.head_dim}},
        {"k", k.data, k.dtype, k.shape, {t, opt_.n_kv_heads, opt_.head_dim}},
        {"v", v.data, v.dtype, v.shape, {t, opt_.n_kv_heads, opt_.head_dim}},
        {"out", out.data, out.dtype, out.shape, {t, opt_.n_q_heads, opt_.head_dim}},
    };
    for (const Arg& a : args) {
      if (a.shape != a.expected) {
        return error(kInvalidArgument, "attention: {}.shape = [{}], expected [{}] ([step tokens, {} heads, head_dim])",
                     a.name, fmt::join(a.shape, ", "), fmt::join(a.expected, ", "),
                     a.name[0] == 'k' || a.name[0] == 'v' ? "kv" : "q");
      }
      if (a.dtype != opt_.dtype) {
        return error(kInvalidArgument, "attention: {}.dtype = {}, expected {} (the runtime's dtype)", a.name, to_string(a.dtype), to_string(opt_.dtype));
      }
      if (!a.data) return error(kInvalidArgument, "attention: {}.data is null", a.name);
    }
    return Status::ok();
  }

  /// Publishes the newest finished re-evaluation of (sequence, layer), if any.
  void publish(Sequence& seq, int32_t layer) {
    auto& job = seq.pending[layer];
    if (!job || !job->done.load(std::memory_order_acquire)) return;
    seq.layers[layer].apply_reevaluation(job->weights, selection());
    job.reset();
    ++reevaluations_[layer];
  }

  kvmgr::SelectionParams selection() const { return {opt_.beta, opt_.min_keep, opt_.heads_per_task}; }

  template <typename T>
  void attend(int32_t layer, const T* q, const T* k, const T* v, T* out, float* lse_out) {
    const auto batch = static_cast<int32_t>(batch_.size());
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim, g = hq / hkv;
    const int64_t tokens = offsets_.back();
    for (auto* seq : batch_) publish(*seq, layer);

    // Partial states of the two sides, fp32: the window's (dense) and the context sets' (sparse).
    const std::size_t rows = static_cast<std::size_t>(tokens) * hq;
    std::vector<float> o_window(rows * d), lse_window(rows), o_context(rows * d), lse_context(rows);
    // weights[i * hkv + h]: the MAW observation `a` for sequence i's window ∪ new entries.
    std::vector<std::vector<float>> weights(static_cast<std::size_t>(batch) * hkv);
    for (int32_t i = 0; i < batch; ++i) {
      const int64_t dense = batch_[i]->layers[layer].window().size() + n_new_[i];
      for (int32_t h = 0; h < hkv; ++h) weights[i * hkv + h].resize(static_cast<std::size_t>(dense));
    }

    // Sparse over each context set S(l, s, h), contiguous in the context cache: one engine call
    // over the whole step's (sequence, KV head) items, after the window's dense part.
    std::vector<cpu::SparseItem> sparse(static_cast<std::size_t>(batch) * hkv);
    for (int32_t i = 0; i < batch; ++i) {
      for (int32_t h = 0; h < hkv; ++h) {
        const auto& store = batch_[i]->layers[layer].store(h);
        const int64_t row = offsets_[i] * hq + static_cast<int64_t>(h) * g;
        sparse[i * hkv + h] = {store.context_k.data(), store.context_v.data(), store.context.size(),
                               q + row * d, static_cast<int64_t>(hq) * d, n_new_[i],
                               o_context.data() + row * d, static_cast<int64_t>(hq) * d,
                               lse_context.data() + row, hq};
      }
    }

    arena_.execute([&] {
      tbb::parallel_for(0, batch * hkv, [&](int32_t task) {
        const int32_t i = task / hkv, h = task % hkv;
        const auto& kv = batch_[i]->layers[layer];
        const int64_t row0 = offsets_[i];
        const int64_t token_stride = static_cast<int64_t>(hkv) * d;

        cpu::GroupAttentionParams<T> p;
        p.q = q + row0 * hq * d + static_cast<int64_t>(h) * g * d;
        p.q_row_stride = static_cast<int64_t>(hq) * d;
        p.n_rows = n_new_[i];
        p.group = g;
        p.head_dim = d;
        p.sm_scale = sm_scale_;
        p.o_row_stride = static_cast<int64_t>(hq) * d;
        p.lse_row_stride = hq;

        // Dense and exact over the window, then the new tokens causally.
        std::vector<cpu::KvSegment<T>> window;
        for (const auto& run : kv.window().runs()) {
          if (run.count == 0) continue;
          window.push_back({reinterpret_cast<const T*>(kv.window().k(run.first_slot)) + h * d,
                            reinterpret_cast<const T*>(kv.window().v(run.first_slot)) + h * d,
                            run.count, token_stride});
        }
        window.push_back({k + row0 * token_stride + h * d, v + row0 * token_stride + h * d, n_new_[i], token_stride});
        p.segments = window;
        p.causal_offset = kv.window().size();
        p.o = o_window.data() + (row0 * hq + static_cast<int64_t>(h) * g) * d;
        p.lse = lse_window.data() + row0 * hq + static_cast<int64_t>(h) * g;
        p.weights = weights[task].data();
        cpu::attend_group(p);
      });
      // Validated already (dtype, head_dim): a failure here is a bug.
      if (const Status st = sparse_engine_.attend(opt_.dtype, g, d, sm_scale_, sparse, arena_); !st) {
        throw std::logic_error(st.message());
      }

      constexpr int64_t kMergeRows = 256;
      tbb::parallel_for(int64_t{0}, static_cast<int64_t>(rows), kMergeRows, [&](int64_t r0) {
        const int64_t n = std::min<int64_t>(kMergeRows, static_cast<int64_t>(rows) - r0);
        merge::merge_states(o_window.data() + r0 * d, lse_window.data() + r0, o_context.data() + r0 * d,
                            lse_context.data() + r0, n, d, out + r0 * d, lse_out ? lse_out + r0 : nullptr);
      });
    });

    // Re-evaluation judges the store as it was before this call's eviction (the entries this call
    // evicts were just weighed densely by the same queries).
    std::vector<std::shared_ptr<kvmgr::Reevaluation>> jobs(static_cast<std::size_t>(batch));
    for (int32_t i = 0; i < batch; ++i) {
      const auto& kv = batch_[i]->layers[layer];
      if (n_new_[i] >= opt_.reeval_min_tokens && kv.store_size() > 0) {
        jobs[i] = kvmgr::snapshot_for_reevaluation(
            kv, reinterpret_cast<const std::byte*>(q + offsets_[i] * hq * d), n_new_[i], hq, d,
            sm_scale_, opt_.dtype);
      }
    }

    const kvmgr::SelectionParams sel = selection();
    arena_.execute([&] {
      tbb::parallel_for(0, batch, [&](int32_t i) {
        std::vector<const float*> w(static_cast<std::size_t>(hkv));
        for (int32_t h = 0; h < hkv; ++h) w[h] = weights[i * hkv + h].data();
        const int64_t token_stride = static_cast<int64_t>(hkv) * d;
        batch_[i]->layers[layer].commit(reinterpret_cast<const std::byte*>(k + offsets_[i] * token_stride),
                                        reinterpret_cast<const std::byte*>(v + offsets_[i] * token_stride),
                                        n_new_[i], w, opt_.alpha, sel);
      });
    });

    for (int32_t i = 0; i < batch; ++i) {
      if (!jobs[i]) continue;
      batch_[i]->pending[layer] = jobs[i];  // supersedes an older, unpublished one
      if (opt_.deterministic) {
        kvmgr::run_reevaluation(*jobs[i]);
        publish(*batch_[i], layer);
      } else {
        arena_.execute([&] { reeval_tasks_->run([job = jobs[i]] { kvmgr::run_reevaluation(*job); }); });
      }
    }
  }

  Options opt_;
  float sm_scale_;
  int64_t window_tokens_;
  std::size_t elem_size_;
  tbb::task_arena arena_;
  cpu::SparseEngine sparse_engine_;
  // Behind a pointer: task_group's destructor may throw, and ours must not (it waits first).
  std::unique_ptr<tbb::task_group> reeval_tasks_ = std::make_unique<tbb::task_group>();
  std::unordered_map<SeqId, std::unique_ptr<Sequence>> seqs_;

  // The open step.
  bool in_step_ = false;
  std::vector<Sequence*> batch_;
  std::vector<int32_t> n_new_;
  std::vector<int64_t> offsets_{0};  // row offset of each batch entry, then the total
  std::vector<uint8_t> layer_done_;
  std::vector<int64_t> reevaluations_;
};

}  // namespace

Status Runtime::create(const Options& options, std::unique_ptr<Runtime>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "create: out is null");
  Options applied = options;  // HGCA_CONFIG's tuned fields override what the caller set
  if (Status s = apply_config_env(&applied); !s) return s;
  if (Status s = validate(applied); !s) return s;
  try {
    *out = std::make_unique<HostRuntime>(applied);
  } catch (const std::bad_alloc&) {
    return error(StatusCode::kOutOfMemory, "create: host memory exhausted");
  }
  return Status::ok();
}

}  // namespace hgca
