// The step protocol, validation and the CPU-side stages both backends share.
#include "runtime_base.hpp"

#include <fmt/ranges.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <unordered_set>

#include "cpu/attention_host.hpp"
#include "cpu/placement.hpp"
#include "cpu/pool.hpp"
#include "dtype.hpp"
#include "gpu/device.hpp"
#include "options_json.hpp"
#include "overflow_policy.hpp"

namespace hgca {

Status validate_options(const Options& o) {
  using enum StatusCode;
  if (o.n_layers < 1) return error(kInvalidArgument, "n_layers = {}, expected ≥ 1", o.n_layers);
  if (o.n_q_heads < 1) return error(kInvalidArgument, "n_q_heads = {}, expected ≥ 1", o.n_q_heads);
  if (o.n_kv_heads < 1 || o.n_q_heads % o.n_kv_heads != 0) {
    return error(kInvalidArgument, "n_kv_heads = {}, expected ≥ 1 and dividing n_q_heads = {}",
                 o.n_kv_heads, o.n_q_heads);
  }
  // 12 or 264 are head dims of a model that hgca does not support; one ≤ 0 is no head dim at all.
  if (o.head_dim < 8 || o.head_dim > 256 || o.head_dim % 8 != 0) {
    return error(o.head_dim < 1 ? kInvalidArgument : kUnsupported, "head_dim = {}, expected a multiple of 8 in [8, 256]",
                 o.head_dim);
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
  if (o.max_sequences < 1) return error(kInvalidArgument, "max_sequences = {}, expected ≥ 1", o.max_sequences);
  if (o.threads < 0) return error(kInvalidArgument, "threads = {}, expected ≥ 0 (0: all cores)", o.threads);
  if (Status s = kvmgr::check_chunk_bytes(o.store_chunk_bytes); !s) return s;
  if (o.store_limit_bytes < 0) {
    return error(kInvalidArgument, "store_limit_bytes = {}, expected ≥ 0 (0: no limit)", o.store_limit_bytes);
  }
  if (o.store_limit_bytes > 0 && o.store_limit_bytes < o.store_chunk_bytes) {
    return error(kInvalidArgument, "store_limit_bytes = {}, expected 0 (no limit) or at least store_chunk_bytes = {} "
                 "(memory is taken in chunks: not one would fit)", o.store_limit_bytes, o.store_chunk_bytes);
  }
  switch (o.backend) {
    case Backend::kAuto:
    case Backend::kHost: break;
    case Backend::kCuda:
      if (!built_with_cuda()) {
        return error(kUnsupported, "backend = cuda: this build has no CUDA (configure with HGCA_CUDA=ON); use auto or host");
      }
      if (cuda_device_count() == 0) {
        return error(kUnsupported, "backend = cuda: no usable CUDA device (cudaGetDeviceCount failed or found none); use auto or host");
      }
      break;
    default: return error(kInvalidArgument, "backend = {}, expected auto, host or cuda", static_cast<int>(o.backend));
  }
  if (static_cast<uint32_t>(o.handoff) > static_cast<uint32_t>(HostHandoff::kCallback)) {
    return error(kInvalidArgument, "handoff = {}, expected auto, poll or callback", static_cast<int>(o.handoff));
  }
  if (static_cast<uint32_t>(o.store_writes) > static_cast<uint32_t>(StoreWrites::kStreamed)) {
    return error(kInvalidArgument, "store_writes = {}, expected auto, cached or streamed", static_cast<int>(o.store_writes));
  }
  if (o.staging_limit_bytes <= 0) {
    return error(kInvalidArgument, "staging_limit_bytes = {}, expected > 0 (bytes of FlashD2H's pinned staging)",
                 o.staging_limit_bytes);
  }
  if (Status s = check_overflow_options(o); !s) return s;
  return validate_tuning(o);
}

RuntimeBase::RuntimeBase(const Options& options)
    : opt_(options),
      sm_scale_(options.sm_scale > 0.0f ? options.sm_scale
                                        : 1.0f / std::sqrt(static_cast<float>(options.head_dim))),
      window_tokens_(static_cast<int64_t>(options.window_blocks) * options.block_tokens),
      elem_size_(dtype_size(options.dtype)),
      sparse_engine_(cpu::engine_config(options)),
      layer_done_(static_cast<std::size_t>(options.n_layers), 0),
      reevaluations_(static_cast<std::size_t>(options.n_layers), 0) {}

Status RuntimeBase::init_store_memory(const Machine& machine, kvmgr::ChunkRegistration registration) {
  kvmgr::StoreMemoryOptions o;
  o.chunk_bytes = static_cast<std::size_t>(opt_.store_chunk_bytes);
  o.limit_bytes = static_cast<std::size_t>(opt_.store_limit_bytes);
  o.writes = opt_.store_writes;
  o.registration = std::move(registration);
  return kvmgr::StoreMemory::create(machine.topology, std::move(o), &store_memory_);
}

RuntimeBase::~RuntimeBase() {
  if (!pool_) return;
  for (int n = 0; n < pool_->node_count(); ++n) {
    tbb::task_group& tasks = *reeval_tasks_[static_cast<std::size_t>(n)];
    try {
      pool_->background(n).execute([&] { tasks.wait(); });
    } catch (...) {
      // A re-evaluation that failed (there is no one to report it to now), or no memory to enter
      // an arena that never ran one: whatever is left is waited for here.
      try {
        tasks.wait();
      } catch (...) {
      }
    }
  }
}

Status RuntimeBase::init_cpu(const Machine& machine, const std::string& gpu_pci_bus_id) {
  if (!machine.topology) return error(StatusCode::kInvalidArgument, "init_cpu: the machine has no topology");
  const cpu::Topology& topology = *machine.topology;
  if (!gpu_pci_bus_id.empty() && !topology.nodes_near_pci(gpu_pci_bus_id, &gpu_local_nodes_)) {
    gpu_local_nodes_.clear();
    // Only a choice between nodes is lost; say so where there is one to make.
    if (topology.is_this_system() && topology.node_count() > 1) {
      cpu::warn_once(fmt::format("hgca: the GPU at PCI {} is not in hwloc's view of this machine, so NUMA placement "
                                 "cannot prefer its node(s) and balances sequences by load only",
                                 gpu_pci_bus_id));
    }
  }
  cpu::PoolOptions po;
  po.threads = opt_.threads;
  po.threads_per_node = opt_.threads_per_node;
  po.preferred_nodes = gpu_local_nodes_;
  if (Status s = cpu::Pool::create(machine.topology, po, &pool_); !s) return s;
  for (int n = 0; n < pool_->node_count(); ++n) reeval_tasks_.push_back(std::make_unique<tbb::task_group>());
  return Status::ok();
}

Status RuntimeBase::cpu_stats(CpuStats* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "cpu_stats: out is null");
  return guarded("cpu_stats", [&]() -> Status {
    CpuStats st;
    st.isa = cpu::to_cpu_isa(sparse_engine_.isa());
    st.kv_split_tokens = static_cast<int32_t>(sparse_engine_.config().kv_split_tokens);
    st.max_packed_heads = sparse_engine_.config().max_packed_heads;
    st.numa_bound = pool_->numa_bound();
    st.nodes.resize(static_cast<std::size_t>(pool_->node_count()));
    for (int n = 0; n < pool_->node_count(); ++n) st.nodes[static_cast<std::size_t>(n)].threads = pool_->threads(n);
    for (int n : gpu_local_nodes_) st.nodes[static_cast<std::size_t>(n)].gpu_local = true;
    for (const auto& [id, seq] : seqs_) ++st.nodes[static_cast<std::size_t>(seq->node)].sequences;
    *out = std::move(st);
    return Status::ok();
  });
}

Status RuntimeBase::sequence_node(SeqId id, int32_t* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "sequence_node: out is null");
  const SequenceState* seq = find(id);
  if (!seq) return error(StatusCode::kNotFound, "sequence_node: seq_id = {} is unknown", id);
  *out = seq->node;
  return Status::ok();
}

Status RuntimeBase::add_sequence(SeqId id) {
  return guarded("add_sequence", [&]() -> Status {
    if (in_step_) return error(StatusCode::kFailedPrecondition, "add_sequence: seq_id = {}: a step is open; add sequences between end_step and begin_step", id);
    if (seqs_.contains(id)) return error(StatusCode::kInvalidArgument, "add_sequence: seq_id = {} already exists", id);
    if (static_cast<int64_t>(seqs_.size()) >= opt_.max_sequences) {
      return error(StatusCode::kOutOfMemory, "add_sequence: seq_id = {}: {} sequences are live, the most options.max_sequences = {} allows",
                   id, seqs_.size(), opt_.max_sequences);
    }
    // A sequence's CPU work grows with its history: a node's load is its sequences' lengths, each
    // plus one so that new sequences count too. Sequences stay where they start (their stores do).
    std::vector<double> load(static_cast<std::size_t>(pool_->node_count()), 0.0);
    for (const auto& [other, seq] : seqs_) load[static_cast<std::size_t>(seq->node)] += static_cast<double>(seq->length + 1);
    const int node = std::max(0, cpu::choose_node(load, pool_->threads_per_node(), gpu_local_nodes_, 1.0,
                                                  opt_.numa_placement));
    std::unique_ptr<SequenceState> seq;
    try {
      seq = make_sequence(node);  // its windows, held whole from the start
    } catch (const kvmgr::StoreMemoryExhausted&) {
      throw;
    } catch (const std::bad_alloc&) {
      const double window_mib = static_cast<double>(opt_.n_layers) * opt_.window_blocks * opt_.block_tokens *
                                opt_.n_kv_heads * opt_.head_dim * 2.0 * static_cast<double>(elem_size_) / (1 << 20);
      return error(StatusCode::kOutOfMemory, "add_sequence: seq_id = {}: host memory exhausted for its windows "
                   "(n_layers {} x window_blocks {} x block_tokens {} tokens of K and V: {:.3g} MiB)",
                   id, opt_.n_layers, opt_.window_blocks, opt_.block_tokens, window_mib);
    }
    seq->node = node;
    // Undone if what follows runs out of memory: the backend took resources for it (a ring slot).
    try {
      seq->pending.resize(static_cast<std::size_t>(opt_.n_layers));
      seq->reserved.resize(static_cast<std::size_t>(opt_.n_layers));
      seqs_.reserve(seqs_.size() + 1);  // the emplace then allocates its node only, before it moves seq
      seqs_.emplace(id, std::move(seq));
    } catch (...) {
      if (seq) drop_sequence(*seq);
      throw;
    }
    store_memory_->prepare(node);  // its first steps find chunks ready
    return Status::ok();
  });
}

Status RuntimeBase::release_sequence(SeqId id) {
  if (in_step_) return error(StatusCode::kFailedPrecondition, "release_sequence: seq_id = {}: a step is open; release sequences between end_step and begin_step", id);
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return error(StatusCode::kNotFound, "release_sequence: seq_id = {} is unknown", id);
  // Enqueued work may still write this sequence's store.
  if (Status s = reported_as(drain(), "release_sequence: seq_id = {}", id); !s) return s;
  // A re-evaluation still running keeps its own snapshot alive; its result is dropped.
  drop_sequence(*it->second);
  seqs_.erase(it);
  return Status::ok();
}

namespace {
void drop_reserved(const StepBatch& step) {
  for (SequenceState* seq : step.seqs) std::fill(seq->reserved.begin(), seq->reserved.end(), kvmgr::DramStore::PreparedAppend{});
}
}  // namespace

Status RuntimeBase::begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) {
  return guarded("begin_step", [&]() -> Status {
    using enum StatusCode;
    if (in_step_) return error(kFailedPrecondition, "begin_step: the previous step was not ended (call end_step first)");
    if (seq_ids.empty()) return error(kInvalidArgument, "begin_step: seq_ids is empty, expected ≥ 1 sequence");
    if (seq_ids.size() != n_new.size()) {
      return error(kInvalidArgument, "begin_step: n_new.size() = {}, expected {} (one per seq_id)", n_new.size(), seq_ids.size());
    }
    auto step = std::make_shared<StepBatch>();
    std::unordered_set<SeqId> seen;
    for (std::size_t i = 0; i < seq_ids.size(); ++i) {
      auto it = seqs_.find(seq_ids[i]);
      if (it == seqs_.end()) return error(kNotFound, "begin_step: seq_ids[{}] = {} is unknown (add_sequence first)", i, seq_ids[i]);
      if (!seen.insert(seq_ids[i]).second) return error(kInvalidArgument, "begin_step: seq_ids[{}] = {} appears twice", i, seq_ids[i]);
      if (n_new[i] < 1) return error(kInvalidArgument, "begin_step: n_new[{}] = {}, expected ≥ 1", i, n_new[i]);
      step->seqs.push_back(it->second.get());
      step->n_new.push_back(n_new[i]);
      step->offsets.push_back(step->offsets.back() + n_new[i]);
    }
    // Store memory for the whole step, so that an attention call cannot run out of it half-way
    // through a step (its layers would disagree, and no sequence can be released while it is open).
    std::size_t i = 0;  // the sequence whose blocks are being taken: named when memory runs out
    try {
      for (; i < seq_ids.size(); ++i) {
        for (int32_t l = 0; l < opt_.n_layers; ++l) step->seqs[i]->reserved[l] = step_blocks(*step->seqs[i], l, n_new[i]);
      }
    } catch (const kvmgr::StoreMemoryExhausted& e) {
      drop_reserved(*step);
      return error(kOutOfMemory, "begin_step: the store blocks of this step's calls, at seq_ids[{}] = {} with "
                   "n_new[{}] = {}: {}; then begin the step again (nothing changed)", i, seq_ids[i], i, n_new[i], e.what());
    } catch (const std::bad_alloc&) {
      drop_reserved(*step);
      return error(kOutOfMemory, "begin_step: host memory exhausted for the store blocks of this step's calls, at "
                   "seq_ids[{}] = {} with n_new[{}] = {} (nothing changed)", i, seq_ids[i], i, n_new[i]);
    } catch (...) {
      drop_reserved(*step);
      throw;
    }
    step_ = std::move(step);
    std::fill(layer_done_.begin(), layer_done_.end(), 0);
    in_step_ = true;
    return Status::ok();
  });
}

Status RuntimeBase::end_step() {
  if (!in_step_) return error(StatusCode::kFailedPrecondition, "end_step: no step is open (call begin_step first)");
  for (int32_t l = 0; l < opt_.n_layers; ++l) {
    if (!layer_done_[l]) {
      return error(StatusCode::kFailedPrecondition, "end_step: layer {} was not attended in this step (every layer once per step)", l);
    }
  }
  for (int32_t i = 0; i < step_->size(); ++i) step_->seqs[i]->length += step_->n_new[i];
  in_step_ = false;
  step_.reset();
  return Status::ok();
}

Status RuntimeBase::abort_step() {
  if (!in_step_) return error(StatusCode::kFailedPrecondition, "abort_step: no step is open");
  {
    // A runtime stopped by a call's failed host side (CUDA backend) stays stopped: that call may
    // have failed before marking its layer, and its step cannot be taken back.
    std::lock_guard lock(error_mutex_);
    if (!async_error_.is_ok() && async_error_.code() != StatusCode::kOutOfMemory) return async_error_;
  }
  for (int32_t l = 0; l < opt_.n_layers; ++l) {
    if (layer_done_[l]) {
      return error(StatusCode::kFailedPrecondition, "abort_step: layer {} was attended in this step and holds its new "
                   "rows: a step can be abandoned only before its first attention call (attend the other layers "
                   "and end_step)", l);
    }
  }
  drop_reserved(*step_);
  in_step_ = false;
  step_.reset();
  return Status::ok();
}

Status RuntimeBase::layer_stats(int32_t layer, LayerStats* out) const {
  if (Status s = check_layer("layer_stats", layer); !s) return s;
  if (!out) return error(StatusCode::kInvalidArgument, "layer_stats: out is null");
  if (Status s = reported_as(drain(), "layer_stats: layer {}", layer); !s) return s;
  return guarded("layer_stats", [&]() -> Status {
    LayerStats st;
    st.context_tokens.assign(static_cast<std::size_t>(opt_.n_kv_heads), 0);
    int64_t context_total = 0;
    for (const auto& [id, seq] : seqs_) {
      const auto& store = dram(*seq, layer);
      ++st.sequences;
      st.window_tokens += window_size(*seq, layer);
      st.window_capacity += window_tokens_;
      st.store_tokens += store.size();
      for (int32_t h = 0; h < opt_.n_kv_heads; ++h) {
        st.context_tokens[h] += store.store(h).context.size();
        context_total += store.store(h).context.size();
      }
    }
    if (st.store_tokens > 0) {
      st.selected_fraction = static_cast<double>(context_total) /
                             (static_cast<double>(st.store_tokens) * opt_.n_kv_heads);
    }
    st.reevaluations = reevaluations_[layer];
    backend_stats(layer, &st);
    *out = std::move(st);
    return Status::ok();
  });
}

Status RuntimeBase::sequence_length(SeqId id, int64_t* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "sequence_length: out is null");
  const SequenceState* seq = find(id);
  if (!seq) return error(StatusCode::kNotFound, "sequence_length: seq_id = {} is unknown", id);
  *out = seq->length;
  return Status::ok();
}

Status RuntimeBase::store_memory_stats(std::vector<StoreMemoryStats>* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "store_memory_stats: out is null");
  if (Status s = reported_as(drain(), "store_memory_stats"); !s) return s;
  return guarded("store_memory_stats", [&]() -> Status {
    std::vector<StoreMemoryStats> st;
    for (int node = 0; node < store_memory_->node_count(); ++node) st.push_back(store_memory_->stats(node));
    *out = std::move(st);
    return Status::ok();
  });
}

Status RuntimeBase::synchronize() {
  if (Status s = reported_as(drain(), "synchronize"); !s) return s;
  return guarded("synchronize", [&]() -> Status {
    wait_reevaluations();
    std::exception_ptr failed;  // one that cannot be applied (dropped) does not keep the others back
    for (auto& [id, seq] : seqs_) {
      for (int32_t l = 0; l < opt_.n_layers; ++l) {
        try {
          publish(*seq, l);
        } catch (const std::bad_alloc&) {
          if (!failed) failed = std::current_exception();
        }
      }
    }
    if (failed) std::rethrow_exception(failed);
    store_memory_->wait_idle();  // chunks grown on the way are registered
    return Status::ok();
  });
}

Status RuntimeBase::store(SeqId id, int32_t layer, const kvmgr::DramStore** out) const {
  const SequenceState* seq = find(id);
  if (!seq) return error(StatusCode::kNotFound, "store: seq_id = {} is unknown", id);
  if (Status s = check_layer("store", layer); !s) return s;
  if (Status s = reported_as(drain(), "store: layer {}", layer); !s) return s;
  *out = &dram(*seq, layer);
  return Status::ok();
}

void RuntimeBase::report_later(Status s) const {
  std::lock_guard lock(error_mutex_);
  if (async_error_.is_ok() ||
      (async_error_.code() == StatusCode::kOutOfMemory && s.code() != StatusCode::kOutOfMemory)) {
    async_error_ = std::move(s);
  }
}

Status RuntimeBase::reported_by(const std::string& call, const Status& s) {
  if (s.code() == StatusCode::kOutOfMemory) {
    return error(StatusCode::kOutOfMemory, "{}: not run, make the call again: memory ran out in an earlier call, which "
                 "went on without it ({}); to make room, release sequences or raise store_limit_bytes once the step "
                 "has ended", call, s.message());
  }
  return error(s.code(), "{}: not run: an earlier call failed on the host side ({})", call, s.message());
}

Status RuntimeBase::deferred_error() const {
  std::lock_guard lock(error_mutex_);
  Status s = async_error_;
  if (s.code() == StatusCode::kOutOfMemory) async_error_ = Status::ok();
  return s;
}

Status RuntimeBase::check_layer(const char* what, int32_t layer) const {
  if (layer < 0 || layer >= opt_.n_layers) {
    return error(StatusCode::kInvalidArgument, "{}: layer = {}, expected in [0, {})", what, layer, opt_.n_layers);
  }
  return Status::ok();
}

SequenceState* RuntimeBase::find(SeqId id) const {
  auto it = seqs_.find(id);
  return it == seqs_.end() ? nullptr : it->second.get();
}

int64_t RuntimeBase::read_store(const kvmgr::DramStore& store, std::byte* k_out, std::byte* v_out) const {
  const std::size_t head_bytes = static_cast<std::size_t>(opt_.head_dim) * elem_size_;
  const std::size_t row_bytes = head_bytes * opt_.n_kv_heads;
  for (int64_t t = 0; t < store.size(); ++t) {
    for (int32_t h = 0; h < opt_.n_kv_heads; ++h) {
      std::memcpy(k_out + t * row_bytes + h * head_bytes, store.k(h, t), head_bytes);
      std::memcpy(v_out + t * row_bytes + h * head_bytes, store.v(h, t), head_bytes);
    }
  }
  return store.size();
}

Status RuntimeBase::validate_call(int32_t layer, const TensorView& q, const TensorView& k,
                                  const TensorView& v, const MutableTensorView& out, const float* lse_out) const {
  using enum StatusCode;
  if (!in_step_) return error(kFailedPrecondition, "attention: no step is open (call begin_step first)");
  if (Status s = check_layer("attention", layer); !s) return s;
  if (layer_done_[layer]) return error(kFailedPrecondition, "attention: layer = {} was already attended in this step (every layer once per step)", layer);
  const int64_t t = step_->tokens();
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
      return error(kInvalidArgument, "attention: {}.shape = [{}], expected [{}] ([the step's tokens (total_tokens in "
                   "the C ABI), {} heads, head_dim])", a.name, fmt::join(a.shape, ", "), fmt::join(a.expected, ", "),
                   a.name[0] == 'k' || a.name[0] == 'v' ? "kv" : "q");
    }
    if (a.dtype != opt_.dtype) {
      return error(kInvalidArgument, "attention: {}.dtype = {} ({}), expected {} (the runtime's dtype)", a.name,
                   static_cast<int>(a.dtype), to_string(a.dtype), to_string(opt_.dtype));
    }
    if (!a.data) return error(kInvalidArgument, "attention: {}.data is null", a.name);
  }
  // q, k and v are still read after out and lse_out are written (the merge, a re-evaluation's
  // queries), and out and lse_out are written together: sharing memory would change the results
  // silently.
  struct Range {
    const char* name;
    std::uintptr_t begin, bytes;
    bool overlaps(const Range& o) const { return begin < o.begin + o.bytes && o.begin < begin + bytes; }
  };
  auto range = [&](const Arg& a) {
    return Range{a.name, reinterpret_cast<std::uintptr_t>(a.data),
                 static_cast<std::uintptr_t>(a.shape[0] * a.shape[1] * a.shape[2]) * elem_size_};
  };
  const Range inputs[] = {range(args[0]), range(args[1]), range(args[2])};
  const Range written[] = {range(args[3]), {"lse_out", reinterpret_cast<std::uintptr_t>(lse_out),
                                            static_cast<std::uintptr_t>(t * opt_.n_q_heads) * sizeof(float)}};
  const std::span<const Range> outputs(written, lse_out ? 2 : 1);
  if (outputs.size() == 2 && written[1].overlaps(written[0])) {
    return error(kInvalidArgument, "attention: lse_out = {:#x} ({} bytes) overlaps out = {:#x} ({} bytes), expected "
                 "separate buffers", written[1].begin, written[1].bytes, written[0].begin, written[0].bytes);
  }
  for (const Range& w : outputs) {
    for (const Range& r : inputs) {
      if (w.overlaps(r)) {
        return error(kInvalidArgument, "attention: {} = {:#x} ({} bytes) overlaps {} = {:#x} ({} bytes), expected "
                     "separate buffers (q, k and v are read after {} is written)", w.name, w.begin, w.bytes, r.name,
                     r.begin, r.bytes, w.name);
      }
    }
  }
  return Status::ok();
}

void RuntimeBase::publish(SequenceState& seq, int32_t layer) {
  if (!seq.pending[layer] || !seq.pending[layer]->done.load(std::memory_order_acquire)) return;
  // Taken first: one that cannot be applied is dropped, not tried again by every later call.
  const std::shared_ptr<kvmgr::Reevaluation> job = std::move(seq.pending[layer]);
  dram(seq, layer).apply_reevaluation(job->weights, selection());
  ++reevaluations_[layer];
}

void RuntimeBase::publish(const StepBatch& batch, int32_t layer) {
  std::exception_ptr failed;
  for (auto* seq : batch.seqs) {
    try {
      publish(*seq, layer);
    } catch (const std::bad_alloc&) {  // StoreMemoryExhausted included
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

void RuntimeBase::sparse_attention(const StepBatch& batch, int32_t layer, const void* q, float* o,
                                   float* lse, std::span<const uint8_t> on_gpu) {
  const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim, g = hq / hkv;
  const auto* q_bytes = static_cast<const std::byte*>(q);
  // One engine call over the whole step's (sequence, KV head) items, each over its context cache's
  // segments and run in its sequence's node arena.
  std::vector<cpu::SparseItem> items(static_cast<std::size_t>(batch.size()) * hkv);
  for (int32_t i = 0; i < batch.size(); ++i) {
    for (int32_t h = 0; h < hkv; ++h) {
      const auto& store = dram(*batch.seqs[i], layer).store(h);
      const int64_t row = batch.offsets[i] * hq + static_cast<int64_t>(h) * g;
      // An item the GPU attends is the empty side here (o = 0, lse = -inf).
      const int64_t n = on_gpu.empty() || !on_gpu[i * hkv + h] ? static_cast<int64_t>(store.context.size()) : 0;
      const kvmgr::ContextCache& cache = store.context_cache;
      items[i * hkv + h] = {cache.k(), cache.v(), n,
                            q_bytes + row * d * static_cast<int64_t>(elem_size_), static_cast<int64_t>(hq) * d,
                            batch.n_new[i], o + row * d, static_cast<int64_t>(hq) * d, lse + row, hq,
                            batch.seqs[i]->node, cache.segments(), cache.segment_rows()};
    }
  }
  // Validated already (dtype, head_dim): a failure here is a bug.
  if (const Status s = sparse_engine_.attend(opt_.dtype, g, d, sm_scale_, items, pool_->arenas()); !s) {
    throw std::logic_error(s.message());
  }
}

std::vector<std::shared_ptr<kvmgr::Reevaluation>> RuntimeBase::snapshot_reevaluations(
    const StepBatch& batch, int32_t layer, const void* q) {
  const int64_t q_row_bytes = static_cast<int64_t>(opt_.n_q_heads) * opt_.head_dim * elem_size_;
  std::vector<std::shared_ptr<kvmgr::Reevaluation>> jobs(batch.seqs.size());
  for (int32_t i = 0; i < batch.size(); ++i) {
    const auto& store = dram(*batch.seqs[i], layer);
    if (batch.n_new[i] >= opt_.reeval_min_tokens && store.size() > 0) {
      jobs[i] = kvmgr::snapshot_for_reevaluation(
          store, static_cast<const std::byte*>(q) + batch.offsets[i] * q_row_bytes, batch.n_new[i],
          opt_.n_q_heads, opt_.head_dim, sm_scale_, opt_.dtype, sparse_engine_.isa());
    }
  }
  return jobs;
}

void RuntimeBase::start_reevaluations(const StepBatch& batch, int32_t layer,
                                      std::vector<std::shared_ptr<kvmgr::Reevaluation>>& jobs) {
  // Each sequence's failure is its own: the others still start (and publish), then the first is
  // rethrown.
  std::exception_ptr failed;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i]) continue;
    auto& pending = batch.seqs[i]->pending[layer];
    pending = jobs[i];  // supersedes an older, unpublished one
    try {
      if (opt_.deterministic) {
        pool_->execute(batch.seqs[i]->node, [&] { kvmgr::run_reevaluation(*jobs[i]); });  // its heads on the node's threads
        publish(*batch.seqs[i], layer);
      } else {
        // In the node's low-priority arena: a scatter or a CPU part that a step waits for must not
        // queue behind a prefill's re-evaluations.
        const int node = batch.seqs[i]->node;
        tbb::task_group& tasks = *reeval_tasks_[static_cast<std::size_t>(node)];
        pool_->background(node).execute([&] { tasks.run([job = jobs[i]] { kvmgr::run_reevaluation(*job); }); });
      }
    } catch (const std::bad_alloc&) {  // StoreMemoryExhausted included
      if (pending == jobs[i]) pending.reset();  // it never ran: dropped (a publish that failed took it)
      if (!failed) failed = std::current_exception();
    }
  }
  jobs.clear();
  if (failed) std::rethrow_exception(failed);
}

void RuntimeBase::wait_reevaluations() {
  // In the arena that runs the group's tasks (a node's only thread may be ours).
  for (int n = 0; n < pool_->node_count(); ++n) {
    pool_->background(n).execute([&] { reeval_tasks_[static_cast<std::size_t>(n)]->wait(); });
  }
}

}  // namespace hgca
