// The CUDA backend: every layer's window ring lives in one pre-allocated device slab and is attended
// on the GPU; the store lives in DRAM and its context sets are attended by the CPU pool at the same
// time; the two partial states merge on the GPU, reading the CPU's through mapped pinned memory.
//
// One attention call enqueues, on the caller's stream S and the runtime's side stream C:
//   S: record fork                     C: wait fork → copy q to pinned → host fn: CPU sparse
//   S: window attention (o, lse, MAW)     attention into mapped o_c, lse_c → record cpu_done
//   S: wait cpu_done → merge into out → [pack evicted entries → one copy to pinned staging]
//      → insert the new tokens into the ring → [host fn: store append, selection, re-evaluation]
// The host functions read the step they belong to from a job that outlives the call, so nothing
// blocks the calling thread and the whole sequence can be captured into a CUDA graph.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

#include "gpu/host_memory.hpp"
#include "gpu/window_attention.hpp"
#include "gpu/window_commit.hpp"
#include "merge/merge_cuda.hpp"
#include "runtime_backends.hpp"
#include "runtime_base.hpp"

namespace hgca {
namespace {

Status cuda_status(const char* what, int code) {
  const auto e = static_cast<cudaError_t>(code);
  const StatusCode sc = e == cudaErrorMemoryAllocation ? StatusCode::kOutOfMemory : StatusCode::kInternal;
  return error(sc, "CUDA: {}: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define HGCA_CUDA_TRY(expr)                                             \
  do {                                                                  \
    if (const int hgca_e = static_cast<int>(expr); hgca_e != 0) {       \
      cudaGetLastError();                                               \
      return cuda_status(#expr, hgca_e);                                \
    }                                                                   \
  } while (0)

/// The store's chunks are registered as they come, so that kernels (FlashH2D) read store spans and
/// context caches at their host addresses.
kvmgr::ChunkRegistration store_registration(int device) {
  kvmgr::ChunkRegistration r;
  r.register_chunk = [device](void* base, std::size_t bytes) -> Status {
    if (const int e = gpu::register_host_range(device, base, bytes); e != 0) {
      return cuda_status("cudaHostRegister of a store chunk", e);
    }
    return Status::ok();
  };
  r.unregister_chunk = [device](void* base, std::size_t) { gpu::unregister_host_range(device, base); };
  return r;
}

/// Device or pinned host memory that grows by reallocation (only when no work is in flight).
class Buffer {
 public:
  enum class Kind { kDevice, kPinned, kMapped };
  explicit Buffer(Kind kind) : kind_(kind) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  std::byte* get() const { return ptr_; }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(ptr_); }
  std::size_t capacity() const { return bytes_; }
  bool fits(std::size_t bytes) const { return bytes <= bytes_; }

  Status reserve(std::size_t bytes) {
    if (fits(bytes)) return Status::ok();
    release();
    bytes = std::max<std::size_t>(bytes + bytes / 2, 4096);
    void* p = nullptr;
    switch (kind_) {
      case Kind::kDevice: HGCA_CUDA_TRY(cudaMalloc(&p, bytes)); break;
      case Kind::kPinned: HGCA_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocDefault)); break;
      // Mapped: the GPU reads it in place (zero copy); with unified addressing the host pointer
      // is the device pointer too.
      case Kind::kMapped: HGCA_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocMapped)); break;
    }
    ptr_ = static_cast<std::byte*>(p);
    bytes_ = bytes;
    return Status::ok();
  }

 private:
  void release() {
    if (!ptr_) return;
    if (kind_ == Kind::kDevice) cudaFree(ptr_);
    else cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  Kind kind_;
  std::byte* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The enqueue-time view of one (layer, sequence) window: where its ring's oldest entry is and how
/// many entries it holds once the calls enqueued so far have run.
struct WindowState {
  int32_t tail = 0;
  int32_t size = 0;
};

struct CudaSequence final : SequenceState {
  int32_t ring = 0;                      // its rings in the layers' slabs
  std::vector<WindowState> windows;      // per layer
  std::vector<kvmgr::DramStore> stores;  // per layer
};

class CudaRuntime;

/// What the host functions of one attention call need; kept alive until they have run.
struct CallJob {
  CudaRuntime* runtime = nullptr;
  std::shared_ptr<const StepBatch> step;
  int32_t layer = 0;
  std::vector<int32_t> evict;        // per batch entry
  std::vector<int64_t> staging_row;  // per batch entry
  std::vector<uint32_t> n_ref;       // per batch entry: w + n_new
  bool has_commit = false;           // commit_part follows cpu_part
  bool captured = false;             // part of a CUDA graph: may run any time the graph is launched
  std::atomic<bool> finished{false}; // its last host function has run
};

class CudaRuntime final : public RuntimeBase {
 public:
  explicit CudaRuntime(const Options& options) : RuntimeBase(options) {}

  ~CudaRuntime() override {
    cudaDeviceSynchronize();  // host functions of enqueued calls still point at this runtime
    for (cudaEvent_t e : {fork_, cpu_done_, done_}) {
      if (e) cudaEventDestroy(e);
    }
    if (side_) cudaStreamDestroy(side_);
    if (slab_) cudaFree(slab_);
  }

  Status init() {
    HGCA_CUDA_TRY(cudaGetDevice(&device_));
    HGCA_CUDA_TRY(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&fork_, &cpu_done_, &done_}) {
      HGCA_CUDA_TRY(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    }
    // Per layer: K of every ring, V of every ring, then the MAW of every (ring, KV head, slot).
    ring_bytes_ = static_cast<std::size_t>(opt_.n_kv_heads) * window_tokens_ * opt_.head_dim * elem_size_;
    kv_bytes_ = ring_bytes_ * opt_.max_sequences;
    layer_bytes_ = 2 * kv_bytes_ + static_cast<std::size_t>(opt_.max_sequences) * opt_.n_kv_heads * window_tokens_ * sizeof(float);
    const std::size_t bytes = layer_bytes_ * opt_.n_layers;
    if (cudaMalloc(&slab_, bytes) != cudaSuccess) {
      cudaGetLastError();
      return error(StatusCode::kOutOfMemory,
                   "create: the window slab needs {} MiB of device memory (n_layers {} × max_sequences {} × "
                   "W {} × n_kv_heads {} × head_dim {} × K,V); lower max_sequences or the window",
                   bytes >> 20, opt_.n_layers, opt_.max_sequences, window_tokens_, opt_.n_kv_heads, opt_.head_dim);
    }
    for (int32_t r = opt_.max_sequences - 1; r >= 0; --r) free_rings_.push_back(r);
    if (Status s = init_store_memory(store_registration(device_)); !s) return s;
    // Decode steps of every sequence, a block of each evicted, never grow a buffer (nor wait).
    gpu::WindowAttentionParams wp = window_params();
    wp.batch = opt_.max_sequences;
    return reserve(wp, opt_.max_sequences, static_cast<int64_t>(opt_.max_sequences) * opt_.block_tokens,
                   static_cast<int32_t>(window_tokens_), 1, false);
  }

  Backend backend() const override { return Backend::kCuda; }

  Status attention(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                   const MutableTensorView& out, float* lse_out, void* stream) override {
    if (Status s = deferred_error(); !s) return s;
    if (Status s = validate_call(layer, q, k, v, out); !s) return s;
    if (Status s = check_device_pointers(q, k, v, out, lse_out); !s) return s;
    return guarded([&]() -> Status {
      if (Status s = enqueue(layer, q.data, k.data, v.data, out.data, lse_out, static_cast<cudaStream_t>(stream)); !s) {
        return s;
      }
      layer_done_[layer] = 1;
      return Status::ok();
    });
  }

  Status read_kv(int32_t layer, SeqId id, void* k_out, void* v_out) const override {
    if (Status s = check_layer("read_kv", layer); !s) return s;
    const auto* seq = static_cast<const CudaSequence*>(find(id));
    if (!seq) return error(StatusCode::kNotFound, "read_kv: seq_id = {} is unknown", id);
    if (!k_out || !v_out) return error(StatusCode::kInvalidArgument, "read_kv: k_out and v_out must not be null");
    if (in_step_) return error(StatusCode::kFailedPrecondition, "read_kv: a step is open; read between end_step and begin_step");
    if (Status s = drain(); !s) return s;
    return guarded([&]() -> Status {
      auto* ko = static_cast<std::byte*>(k_out);
      auto* vo = static_cast<std::byte*>(v_out);
      const int64_t m = read_store(seq->stores[layer], ko, vo);
      // The ring is [Hkv, W, D]: copy it whole, then lay its entries out token-major in order.
      const WindowState w = seq->windows[layer];
      const std::size_t head_bytes = static_cast<std::size_t>(opt_.head_dim) * elem_size_;
      std::vector<std::byte> ring(ring_bytes_);
      for (int kv = 0; kv < 2; ++kv) {
        HGCA_CUDA_TRY(cudaMemcpy(ring.data(), ring_ptr(kv, layer, seq->ring), ring_bytes_, cudaMemcpyDeviceToHost));
        std::byte* dst = (kv == 0 ? ko : vo) + m * head_bytes * opt_.n_kv_heads;
        for (int64_t i = 0; i < w.size; ++i) {
          const int64_t slot = (w.tail + i) % window_tokens_;
          for (int32_t h = 0; h < opt_.n_kv_heads; ++h) {
            std::memcpy(dst + (i * opt_.n_kv_heads + h) * head_bytes,
                        ring.data() + (h * window_tokens_ + slot) * head_bytes, head_bytes);
          }
        }
      }
      return Status::ok();
    });
  }

  // --- the host functions (CUDA's callback thread; they must not call CUDA) ---

  /// The CPU's side: publish finished re-evaluations, then sparse attention over the context sets.
  void cpu_part(CallJob& job) {
    run_async("the CPU's sparse attention", [&] {
      publish(*job.step, job.layer);
      sparse_attention(*job.step, job.layer, q_host_.get(), o_cpu_.as<float>(), lse_cpu_.as<float>());
    });
    if (!job.has_commit) job.finished.store(true, std::memory_order_release);
  }

  /// After the window's part: the evicted entries (now in pinned staging) join the stores and are
  /// selected; appends start their re-evaluation over the store as it was before.
  void commit_part(CallJob& job) {
    run_async("the store update", [&] {
      const StepBatch& step = *job.step;
      auto reevaluations = snapshot_reevaluations(step, job.layer, q_host_.get());
      const std::size_t row_bytes = static_cast<std::size_t>(opt_.n_kv_heads) * opt_.head_dim * elem_size_;
      for (int32_t i = 0; i < step.size(); ++i) {
        if (job.evict[i] == 0) continue;
        const int64_t row = job.staging_row[i];
        static_cast<CudaSequence*>(step.seqs[i])->stores[job.layer].append(
            staging_k_.get() + row * row_bytes, staging_v_.get() + row * row_bytes,
            staging_maw_.as<float>() + row * opt_.n_kv_heads, job.evict[i], job.n_ref[i], selection());
      }
      start_reevaluations(step, job.layer, reevaluations);
    });
    job.finished.store(true, std::memory_order_release);
  }

 private:
  std::unique_ptr<SequenceState> make_sequence(int node) override {
    auto seq = std::make_unique<CudaSequence>();
    seq->windows.resize(static_cast<std::size_t>(opt_.n_layers));
    seq->stores.reserve(static_cast<std::size_t>(opt_.n_layers));
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      seq->stores.emplace_back(opt_.block_tokens, opt_.n_kv_heads, opt_.head_dim, elem_size_, store_memory_, node);
    }
    seq->ring = free_rings_.back();  // add_sequence bounded the count by max_sequences
    free_rings_.pop_back();
    return seq;
  }
  void drop_sequence(SequenceState& seq) override {
    free_rings_.push_back(static_cast<CudaSequence&>(seq).ring);
  }
  const kvmgr::DramStore& dram(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const CudaSequence&>(seq).stores[layer];
  }
  kvmgr::DramStore& dram(SequenceState& seq, int32_t layer) override {
    return static_cast<CudaSequence&>(seq).stores[layer];
  }
  int64_t window_size(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const CudaSequence&>(seq).windows[layer].size;
  }

  Status drain() const override {
    if (enqueued_outside_capture_) HGCA_CUDA_TRY(cudaEventSynchronize(done_));
    return deferred_error();
  }

  /// An error a host function met; reported by the next call (the one that enqueued it returned).
  Status deferred_error() const {
    std::lock_guard lock(error_mutex_);
    return async_error_;
  }
  template <typename F>
  void run_async(const char* what, F&& f) {
    Status s = guarded([&]() -> Status {
      f();
      return Status::ok();
    });
    if (!s) {
      std::lock_guard lock(error_mutex_);
      if (async_error_.is_ok()) async_error_ = Status(s.code(), fmt::format("{} failed: {}", what, s.message()));
    }
  }

  std::byte* ring_ptr(int kv, int32_t layer, int32_t ring) const {
    return static_cast<std::byte*>(slab_) + layer * layer_bytes_ + kv * kv_bytes_ + ring * ring_bytes_;
  }
  float* ring_maw(int32_t layer) const {
    return reinterpret_cast<float*>(static_cast<std::byte*>(slab_) + layer * layer_bytes_ + 2 * kv_bytes_);
  }

  Status check_device_pointers(const TensorView& q, const TensorView& k, const TensorView& v,
                               const MutableTensorView& out, const float* lse_out) const {
    const std::pair<const char*, const void*> args[] = {
        {"q", q.data}, {"k", k.data}, {"v", v.data}, {"out", out.data}, {"lse_out", lse_out}};
    for (const auto& [name, ptr] : args) {
      if (!ptr) continue;  // only lse_out may be null here
      cudaPointerAttributes attr{};
      if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();
        attr.type = cudaMemoryTypeUnregistered;
      }
      if (attr.type == cudaMemoryTypeUnregistered) {
        return error(StatusCode::kInvalidArgument,
                     "attention: {} = {} is pageable host memory; the CUDA backend takes device memory "
                     "(or managed / pinned host memory the GPU can read)", name, ptr);
      }
      if (attr.type == cudaMemoryTypeDevice && attr.device != device_) {
        return error(StatusCode::kInvalidArgument, "attention: {} = {} is on CUDA device {}, expected device {} (the runtime's)",
                     name, ptr, attr.device, device_);
      }
    }
    int current = -1;
    HGCA_CUDA_TRY(cudaGetDevice(&current));
    if (current != device_) {
      return error(StatusCode::kFailedPrecondition, "attention: the current CUDA device is {}, expected {} (the runtime was created on it)",
                   current, device_);
    }
    return Status::ok();
  }

  Status enqueue(int32_t layer, const void* q, const void* k, const void* v, void* out,
                 float* lse_out, cudaStream_t stream) {
    const StepBatch& step = *step_;
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim;
    const int64_t tokens = step.tokens();
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    HGCA_CUDA_TRY(cudaStreamIsCapturing(stream, &capture));
    const bool capturing = capture != cudaStreamCaptureStatusNone;

    // Where every sequence stands, and what leaves its window.
    auto job = std::make_shared<CallJob>();
    job->runtime = this;
    job->step = step_;
    job->layer = layer;
    job->captured = capturing;
    std::vector<gpu::WindowSeq> wseqs(static_cast<std::size_t>(step.size()));
    std::vector<gpu::CommitSeq> cseqs(wseqs.size());
    int64_t staged = 0;
    int32_t max_w = 0, max_new = 0;
    bool reevaluates = false;
    for (int32_t i = 0; i < step.size(); ++i) {
      auto& seq = *static_cast<CudaSequence*>(step.seqs[i]);
      const WindowState w = seq.windows[layer];
      const int32_t n = step.n_new[i];
      const auto evict = static_cast<int32_t>(kvmgr::evict_count(w.size, window_tokens_, n, opt_.block_tokens));
      wseqs[i] = {step.offsets[i], step.offsets[i] * hkv, n, w.size, w.tail, seq.ring};
      cseqs[i] = {step.offsets[i], step.offsets[i] * hkv, staged, n, w.size, w.tail, seq.ring, evict};
      job->evict.push_back(evict);
      job->staging_row.push_back(staged);
      job->n_ref.push_back(static_cast<uint32_t>(w.size + n));
      staged += evict;
      max_w = std::max(max_w, w.size);
      max_new = std::max(max_new, n);
      reevaluates |= n >= opt_.reeval_min_tokens;
    }

    gpu::WindowAttentionParams wp = window_params();
    wp.seqs = wseqs.data();
    wp.batch = step.size();
    if (Status s = reserve(wp, tokens, staged, max_w, max_new, capturing); !s) return s;
    const std::size_t rows = static_cast<std::size_t>(tokens) * hq;
    const std::size_t row_bytes = static_cast<std::size_t>(hkv) * d * elem_size_;

    job->has_commit = staged > 0 || reevaluates;

    // C: the query goes to the CPU as soon as the stream has produced it.
    HGCA_CUDA_TRY(cudaEventRecord(fork_, stream));
    HGCA_CUDA_TRY(cudaStreamWaitEvent(side_, fork_, 0));
    HGCA_CUDA_TRY(cudaMemcpyAsync(q_host_.get(), q, rows * d * elem_size_, cudaMemcpyDeviceToHost, side_));
    HGCA_CUDA_TRY(cudaLaunchHostFunc(side_, [](void* p) {
      auto* j = static_cast<CallJob*>(p);
      j->runtime->cpu_part(*j);
    }, job.get()));
    HGCA_CUDA_TRY(cudaEventRecord(cpu_done_, side_));

    // S: the window's part, meanwhile.
    wp.q = q;
    wp.k_new = k;
    wp.v_new = v;
    wp.ring_k = ring_ptr(0, layer, 0);
    wp.ring_v = ring_ptr(1, layer, 0);
    wp.ring_maw = ring_maw(layer);
    wp.o = o_gpu_.as<float>();
    wp.lse = lse_gpu_.as<float>();
    wp.obs_new = obs_.as<float>();
    wp.workspace = attention_ws_.get();
    wp.workspace_bytes = attention_ws_.capacity();
    HGCA_CUDA_TRY(gpu::launch_window_attention(wp, stream));

    // S: the merge waits for the CPU through the stream.
    HGCA_CUDA_TRY(cudaStreamWaitEvent(stream, cpu_done_, 0));
    HGCA_CUDA_TRY(merge::launch_merge_states(o_gpu_.as<float>(), lse_gpu_.as<float>(), o_cpu_.as<float>(),
                                             lse_cpu_.as<float>(), static_cast<int64_t>(rows), d,
                                             opt_.dtype, out, lse_out, stream));

    // S: eviction and insertion; the store update runs on the host once the staging has arrived.
    gpu::WindowCommitParams cp;
    cp.dtype = opt_.dtype;
    cp.n_kv_heads = hkv;
    cp.head_dim = d;
    cp.capacity = static_cast<int32_t>(window_tokens_);
    cp.k_new = k;
    cp.v_new = v;
    cp.ring_k = ring_ptr(0, layer, 0);
    cp.ring_v = ring_ptr(1, layer, 0);
    cp.ring_maw = wp.ring_maw;
    cp.obs_new = wp.obs_new;
    cp.staging_k = staging_k_dev_.get();
    cp.staging_v = staging_v_dev_.get();
    cp.staging_maw = staging_maw_dev_.as<float>();
    cp.seqs = cseqs.data();
    cp.batch = step.size();
    if (staged > 0) {
      HGCA_CUDA_TRY(gpu::launch_evict_pack(cp, stream));
      HGCA_CUDA_TRY(cudaMemcpyAsync(staging_k_.get(), staging_k_dev_.get(), staged * row_bytes, cudaMemcpyDeviceToHost, stream));
      HGCA_CUDA_TRY(cudaMemcpyAsync(staging_v_.get(), staging_v_dev_.get(), staged * row_bytes, cudaMemcpyDeviceToHost, stream));
      HGCA_CUDA_TRY(cudaMemcpyAsync(staging_maw_.get(), staging_maw_dev_.get(), staged * hkv * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
    }
    HGCA_CUDA_TRY(gpu::launch_window_insert(cp, stream));
    if (job->has_commit) {
      HGCA_CUDA_TRY(cudaLaunchHostFunc(stream, [](void* p) {
        auto* j = static_cast<CallJob*>(p);
        j->runtime->commit_part(*j);
      }, job.get()));
    }
    if (!capturing) {
      HGCA_CUDA_TRY(cudaEventRecord(done_, stream));
      enqueued_outside_capture_ = true;
    }

    // The enqueue-time window state follows the calls just enqueued.
    for (int32_t i = 0; i < step.size(); ++i) {
      auto& w = static_cast<CudaSequence*>(step.seqs[i])->windows[layer];
      const int32_t popped = std::min(job->evict[i], w.size);
      const int32_t kept_new = step.n_new[i] - std::max(0, job->evict[i] - w.size);
      w.tail = static_cast<int32_t>((w.tail + popped) % window_tokens_);
      w.size = w.size - popped + kept_new;
    }
    retire();
    jobs_.push_back(std::move(job));
    return Status::ok();
  }

  gpu::WindowAttentionParams window_params() const {
    gpu::WindowAttentionParams wp;
    wp.dtype = opt_.dtype;
    wp.n_q_heads = opt_.n_q_heads;
    wp.n_kv_heads = opt_.n_kv_heads;
    wp.head_dim = opt_.head_dim;
    wp.capacity = static_cast<int32_t>(window_tokens_);
    wp.sm_scale = sm_scale_;
    wp.alpha = opt_.alpha;
    return wp;
  }

  /// Grows the buffers a call of `tokens` new tokens and `staged` evicted entries needs. Growing
  /// frees buffers that enqueued work may still use, so it first waits for that work, which a
  /// stream being captured cannot do. init() sizes them for decode steps of max_sequences.
  Status reserve(const gpu::WindowAttentionParams& wp, int64_t tokens, int64_t staged, int32_t max_w,
                 int32_t max_new, bool capturing) {
    const auto rows = static_cast<std::size_t>(tokens) * opt_.n_q_heads;
    const std::size_t d = opt_.head_dim;
    const std::size_t row_bytes = static_cast<std::size_t>(opt_.n_kv_heads) * d * elem_size_;
    const std::size_t maw_bytes = static_cast<std::size_t>(staged) * opt_.n_kv_heads * sizeof(float);
    const std::pair<Buffer*, std::size_t> needs[] = {
        {&o_gpu_, rows * d * sizeof(float)},
        {&lse_gpu_, rows * sizeof(float)},
        {&obs_, static_cast<std::size_t>(tokens) * opt_.n_kv_heads * sizeof(float)},
        {&attention_ws_, gpu::window_attention_workspace_bytes(wp, tokens, max_w, max_new)},
        {&q_host_, rows * d * elem_size_},
        {&o_cpu_, rows * d * sizeof(float)},
        {&lse_cpu_, rows * sizeof(float)},
        {&staging_k_dev_, staged * row_bytes},
        {&staging_v_dev_, staged * row_bytes},
        {&staging_maw_dev_, maw_bytes},
        {&staging_k_, staged * row_bytes},
        {&staging_v_, staged * row_bytes},
        {&staging_maw_, maw_bytes}};
    bool grow = false;
    for (const auto& [buffer, bytes] : needs) grow |= !buffer->fits(bytes);
    if (!grow) return Status::ok();
    if (capturing) {
      return error(StatusCode::kFailedPrecondition,
                   "attention: this step needs larger buffers than earlier steps ({} new tokens, {} evicted), and the "
                   "stream is being captured; run one step of this shape before capturing it", tokens, staged);
    }
    HGCA_CUDA_TRY(cudaDeviceSynchronize());
    for (const auto& [buffer, bytes] : needs) {
      if (Status s = buffer->reserve(bytes); !s) return s;
    }
    return Status::ok();
  }

  /// Frees the jobs whose host functions have all run (jobs inside a graph live as long as we do).
  void retire() {
    while (!jobs_.empty() && !jobs_.front()->captured &&
           jobs_.front()->finished.load(std::memory_order_acquire)) {
      jobs_.pop_front();
    }
  }

  int device_ = 0;
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, cpu_done_ = nullptr, done_ = nullptr;
  void* slab_ = nullptr;
  std::size_t ring_bytes_ = 0, kv_bytes_ = 0, layer_bytes_ = 0;  // one ring's K; every ring's K; a layer
  std::vector<int32_t> free_rings_;
  bool enqueued_outside_capture_ = false;

  Buffer o_gpu_{Buffer::Kind::kDevice}, lse_gpu_{Buffer::Kind::kDevice}, obs_{Buffer::Kind::kDevice};
  Buffer attention_ws_{Buffer::Kind::kDevice};
  Buffer q_host_{Buffer::Kind::kPinned};
  Buffer o_cpu_{Buffer::Kind::kMapped}, lse_cpu_{Buffer::Kind::kMapped};
  Buffer staging_k_dev_{Buffer::Kind::kDevice}, staging_v_dev_{Buffer::Kind::kDevice},
      staging_maw_dev_{Buffer::Kind::kDevice};
  Buffer staging_k_{Buffer::Kind::kPinned}, staging_v_{Buffer::Kind::kPinned},
      staging_maw_{Buffer::Kind::kPinned};
  std::deque<std::shared_ptr<CallJob>> jobs_;

  mutable std::mutex error_mutex_;
  Status async_error_;
};

}  // namespace

Status make_cuda_runtime(const Options& options, std::unique_ptr<Runtime>* out) {
  auto rt = std::make_unique<CudaRuntime>(options);
  if (Status s = rt->init(); !s) return s;
  *out = std::move(rt);
  return Status::ok();
}

}  // namespace hgca
