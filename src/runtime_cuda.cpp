// The CUDA backend: every layer's window ring lives in one pre-allocated device slab and is attended
// on the GPU; the store lives in DRAM and its context sets are attended by the CPU pool at the same
// time; the two partial states merge on the GPU, reading the CPU's through mapped pinned memory.
//
// One attention call enqueues, on the caller's stream S and the runtime's side stream C:
//   S: record fork                     C: wait fork → host fn: plan (the store update still
//   S: window attention (o, lse, MAW)     pending, finished re-evaluations published: the context
//      → [evicted MAW to staging]         sets are final; the overflow policy picks the items the
//   S: [wait plan_ready → GPU sparse      GPU attends and writes them to mapped memory) → record
//      attention of the moved items]      plan_ready → copy q to pinned → host fn: the CPU's sparse
//   S: wait cpu_done → merge the window,  attention of the other items into mapped o_c, lse_c →
//      the CPU [and the GPU's sparse      record cpu_done
//      part] into out (one launch)
//      → insert the new tokens into the  D: wait fork → copy the new k, v rows to staging
//        ring → wait staged → [host fn:     (FlashD2H) → record staged
//        start the scatter of the evicted entries into the store on the CPU pool; deterministic
//        mode: start the re-evaluations]
// (bracketed: when there is something to do; the GPU's sparse part whenever the policy is on).
// The host functions (gpu::HostCalls: stream memory operations answered by a thread of ours, or
// CUDA host functions) read the step they belong to from a job that outlives the call, so nothing
// blocks the calling thread and the whole sequence can be captured into a CUDA graph.
//
// FlashD2H: rather than packing evicted blocks out of the ring with a kernel, each call copies its
// new K/V rows to the host once, as the caller hands them over ([T, Hkv, D] each, contiguous: one
// copy-engine copy for K and one for V, no SMs), and keeps a host copy of every window
// (kvmgr::MirroredKv), its rows already in the store's per-head blocks. An eviction then only needs
// the evicted entries' MAW from the GPU (a few floats, written into mapped staging); the CPU pool
// hands the host window's oldest blocks to the store and selects them, off the streams: each row is
// copied once, from staging into its block. The calls of every layer take the staging slots in
// turn (a ring: as many slots as Options::staging_limit_bytes holds at the largest call, at least
// 4, at most 2 per layer, never exactly 1 per layer; slots cycled through beyond the last-level
// cache cost the scatter a quarter of its rate and more, bench/results/session32 and session33).
// A call's rows wait in its slot until the layer's next call (or drain()) brings them into the
// host window, or until its scatter has run; the next call of the layer waits for that scatter
// before its sparse attention. The call that takes a slot copies into it after the plan of the
// call before it, and that plan empties the slot first: it waits for the scatter of the slot's
// last call, or brings that call's rows into the host window itself. The copy has a stream of its
// own (D), so that it runs beside the call's attention instead of after the CPU's.
// The blocks a call's rows start in the host window are allocated by begin_step for every layer of
// the step, so that store memory running out for them fails begin_step, with every window and
// store as they were; a call takes its layer's when it is enqueued (a captured call too: the graph
// performs its step once; a graph launched again allocates in its scatter). Room in the context
// caches depends on the context sets, which the work enqueued before may still change, so the
// scatter makes it; running out there is reported by the next call, the evicted entries kept in the
// store unselected (MirroredKv::evict_and_insert).
// A call that fails once its first host function is being launched keeps its job (the function may
// still run) and stops the runtime, as do a scatter that could not bring rows into a host window
// and a CPU part that failed (its call's output is wrong).
//
// The overflow policy (issue 5, item 3; overflow_policy.hpp decides): the GPU attends some
// (sequence, KV head) items' context sets itself, reading the context caches in place in host
// memory through unified addressing — FlashH2D's mechanism fused into the attention. Gathering
// them first with gpu::flash_h2d into device memory would need the span list when the call is
// enqueued (its descriptors travel in the kernel parameters), but the context sets are final only
// in the plan on C; gpu::launch_sparse_attention instead reads its items from mapped memory when
// it runs, and is sized by bounds known at enqueue (B × Hkv items, the rows, the store sizes), so
// graph capture still works. Items the GPU does not take have n = 0 there (the empty side), and
// the CPU gives the moved ones the empty side. Each side's empty rows merge away exactly.
//
// Invariant: nothing changes a context cache of layer l between a call's plan and the end of its
// GPU sparse attention. Context caches change only when entries enter the store (FlashD2H's
// scatter, commit_window) and when a re-evaluation is published. A call's scatter starts in a host
// function on S after its GPU sparse attention, and the layer's next plan waits for it (the scatter
// lane) and commits the rows still staged itself before reading the sets; settle() commits them
// only once the streams are idle. Publishing happens in the plan, in synchronize() after drain(),
// and, in deterministic mode, where a re-evaluation is started: in the scatter or, for a call that
// evicts nothing, in a host function on S after the merge — never in the CPU's part, which runs
// beside the GPU's reads. Other layers' calls touch other stores.
#include <cuda_runtime.h>

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "cpu/flash_d2h.hpp"
#include "gpu/host_calls.hpp"
#include "gpu/host_memory.hpp"
#include "gpu/sparse_attention.hpp"
#include "gpu/window_attention.hpp"
#include "gpu/window_commit.hpp"
#include "merge/merge_cuda.hpp"
#include "overflow_policy.hpp"
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

  /// Grows to at least `bytes` (contents not kept). Should the new allocation fail, the old one
  /// stays: a call refused for memory leaves the buffers that later (captured) calls fit in.
  Status reserve(std::size_t bytes) {
    if (fits(bytes)) return Status::ok();
    bytes = std::max<std::size_t>(bytes + bytes / 2, 4096);
    void* p = nullptr;
    switch (kind_) {
      case Kind::kDevice: HGCA_CUDA_TRY(cudaMalloc(&p, bytes)); break;
      case Kind::kPinned: HGCA_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocDefault)); break;
      // Mapped: the GPU reads it in place (zero copy); with unified addressing the host pointer
      // is the device pointer too.
      case Kind::kMapped: HGCA_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocMapped)); break;
    }
    release();
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

/// Stretches of the transfer clock left to wait before an enqueue reads them back (2 events each).
constexpr std::size_t kTransferStretchesWaiting = 64;

/// Per layer, the seconds that stretches of stream work moving KV out of the window took (CUDA
/// events around them, read back once they have run), plus time the host measured itself.
class TransferClock {
 public:
  explicit TransferClock(int32_t layers) : seconds_(static_cast<std::size_t>(layers), 0.0) {}
  TransferClock(const TransferClock&) = delete;
  TransferClock& operator=(const TransferClock&) = delete;
  ~TransferClock() {
    cancel();
    for (const Stretch& s : pending_) free_.insert(free_.end(), {s.start, s.end});
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
  }

  /// Records the start of a stretch of `layer` on `stream`; end() records its end on the same stream,
  /// or cancel() drops it (the work between failed). Their events are kept for reuse either way.
  Status begin(int32_t layer, cudaStream_t stream) {
    open_ = {layer, nullptr, nullptr};
    HGCA_CUDA_TRY(take(&open_.start));
    HGCA_CUDA_TRY(take(&open_.end));
    HGCA_CUDA_TRY(cudaEventRecord(open_.start, stream));
    return Status::ok();
  }
  /// `recorded` (optional) gets the end's event, which other streams may wait for until the next
  /// enqueue collects it.
  Status end(cudaStream_t stream, cudaEvent_t* recorded = nullptr) {
    HGCA_CUDA_TRY(cudaEventRecord(open_.end, stream));
    if (recorded) *recorded = open_.end;
    std::lock_guard lock(mutex_);
    pending_.push_back(std::exchange(open_, {}));
    return Status::ok();
  }
  void cancel() {
    std::lock_guard lock(mutex_);
    for (cudaEvent_t e : {open_.start, open_.end}) {
      if (e) free_.push_back(e);
    }
    open_ = {};
  }
  /// Time the host spent on a transfer's behalf (a host function that blocks a stream).
  void add(int32_t layer, double seconds) {
    std::lock_guard lock(mutex_);
    seconds_[layer] += seconds;
  }
  /// Adds up the stretches that have run and recycles their events, once more than `waiting`
  /// stretches wait: each query is a driver call, and a decode call's enqueue is bound by those.
  void collect(std::size_t waiting = 0) {
    std::lock_guard lock(mutex_);
    if (pending_.size() <= waiting) return;
    std::erase_if(pending_, [&](const Stretch& s) {
      if (cudaEventQuery(s.end) != cudaSuccess) {
        cudaGetLastError();  // cudaErrorNotReady: still running
        return false;
      }
      float ms = 0.0f;
      if (cudaEventElapsedTime(&ms, s.start, s.end) == cudaSuccess) seconds_[s.layer] += 1e-3 * ms;
      cudaGetLastError();
      free_.insert(free_.end(), {s.start, s.end});
      return true;
    });
  }
  double seconds(int32_t layer) {
    collect();
    std::lock_guard lock(mutex_);
    return seconds_[layer];
  }

 private:
  struct Stretch {
    int32_t layer = 0;
    cudaEvent_t start = nullptr, end = nullptr;
  };
  cudaError_t take(cudaEvent_t* e) {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return cudaEventCreate(e);
    *e = free_.back();
    free_.pop_back();
    return cudaSuccess;
  }

  std::mutex mutex_;
  std::vector<double> seconds_;
  std::vector<Stretch> pending_;
  std::vector<cudaEvent_t> free_;
  Stretch open_;  // begun on the enqueueing thread, not yet ended
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
  /// Per layer: the host's copy of the window, in store blocks, and the store.
  std::vector<kvmgr::MirroredKv> layers;
};

class CudaRuntime;

/// The GPU's window has moved on without a call's new rows, so the host's copy of it no longer
/// matches. Built without the heap: memory running out must not turn it into an error that clears
/// itself, which would let the runtime go on with rows lost.
class HostWindowBehind : public std::exception {
 public:
  HostWindowBehind(int32_t layer, const char* cause) noexcept {
    // What to do first: a long cause is what gets cut, at a character's start.
    const auto r = fmt::format_to_n(message_, sizeof(message_) - 1, "layer {}: new rows could not enter the host's "
                                    "window, and the runtime cannot go on (destroy it and create another): {}",
                                    layer, cause);
    auto n = static_cast<std::size_t>(r.out - message_);
    if (r.size > n) {  // cut: drop a character whose bytes did not all fit
      std::size_t lead = n;
      while (lead > 0 && n - lead < 4 && (static_cast<unsigned char>(message_[lead - 1]) & 0xC0) == 0x80) --lead;
      if (lead > 0) {
        const auto c = static_cast<unsigned char>(message_[--lead]);
        const std::size_t length = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (lead + length > n) n = lead;
      }
    }
    message_[n] = '\0';
  }
  const char* what() const noexcept override { return message_; }

 private:
  char message_[320];
};

/// What the host functions of one attention call need; kept alive until they have run.
struct CallJob {
  CudaRuntime* runtime = nullptr;
  std::shared_ptr<const StepBatch> step;
  int32_t layer = 0;
  std::vector<int64_t> staging_row;  // per batch entry: its evicted MAW is at maw[staging_row * Hkv]
  const std::byte* k = nullptr;      // its staging: the new rows [T, Hkv, D] as the caller gave them
  const std::byte* v = nullptr;
  const float* maw = nullptr;        // the evicted entries' MAW
  bool evicts = false;               // entries leave the window: a scatter brings in its rows
  /// Deterministic mode, an append that may re-evaluate and evicts nothing: its re-evaluations
  /// start (and publish) in a host function on S after the merge, not beside the GPU's reads.
  bool reevaluates_after_merge = false;
  /// Per batch entry: the store blocks its new rows start in the host's window, allocated when the
  /// call was enqueued (count 0: none, or taken by the scatter already; empty: none for any entry).
  std::vector<kvmgr::DramStore::PreparedAppend> prepared;
  const std::byte* q = nullptr;      // the caller's q on the device (the GPU's sparse part reads it)
  double window_s = 0.0;             // the cost model's estimate of the window's attention
  std::vector<uint8_t> on_gpu;       // per item (entry i, KV head h at i·Hkv + h): the plan moved it
  /// Calls whose rows still wait in staging for the host window, brought in by this call's plan:
  /// the layer's previous call, and the last call of the slot the next call takes.
  std::vector<std::shared_ptr<CallJob>> unpushed;
  /// The layer whose scatters this call's plan waits for, so that the last call of the slot the
  /// next call takes is done reading it (−1: none).
  int32_t frees_lane = -1;
  std::vector<std::shared_ptr<kvmgr::Reevaluation>> reevaluations;
  /// Per batch entry, set when its sequence was released while the call's rows wait in staging
  /// (only a captured call's can: settle() commits the others first): they are dropped.
  std::vector<uint8_t> released;
  bool captured = false;             // part of a CUDA graph: may run any time the graph is launched
  std::atomic<bool> finished{false}; // its host-side work is done
};

class CudaRuntime final : public RuntimeBase {
 public:
  explicit CudaRuntime(const Options& options)
      : RuntimeBase(options),
        unpushed_(static_cast<std::size_t>(options.n_layers)),
        transfer_clock_(options.n_layers),
        rates_(overflow_rates(options)),
        window_decode_path_(gpu::window_decode_path_serves(options.dtype, options.head_dim,
                                                           options.n_q_heads / options.n_kv_heads)),
        overflow_on_(options.overflow != OverflowMode::kOff && options.n_q_heads / options.n_kv_heads <= 8),
        overflow_tally_(static_cast<std::size_t>(options.n_layers)) {}

  ~CudaRuntime() override {
    cudaDeviceSynchronize();  // host functions of enqueued calls still point at this runtime
    if (scatters_) scatters_->wait_all();  // and so do the scatters they started
    host_calls_.reset();
    for (cudaEvent_t e : {fork_, plan_ready_, cpu_done_, staged_, done_}) {
      if (e) cudaEventDestroy(e);
    }
    if (side_) cudaStreamDestroy(side_);
    if (d2h_) cudaStreamDestroy(d2h_);
    if (slab_) cudaFree(slab_);
  }

  Status init(const Machine& machine) {
    const int32_t group = opt_.n_q_heads / opt_.n_kv_heads;
    if (opt_.overflow == OverflowMode::kAlways && group > 8) {
      return error(StatusCode::kUnsupported,
                   "overflow = always: n_q_heads / n_kv_heads = {}, expected at most 8 query heads per KV head for "
                   "the GPU's sparse attention (auto leaves such models on the CPU)", group);
    }
    HGCA_CUDA_TRY(cudaGetDevice(&device_));
    HGCA_CUDA_TRY(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));
    // Placement prefers the NUMA nodes next to this device (unless the caller named another GPU).
    std::string gpu = machine.gpu_pci_bus_id;
    if (gpu.empty()) {
      char bus_id[32] = {};
      HGCA_CUDA_TRY(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_));
      gpu = bus_id;
    }
    if (Status s = init_cpu(machine, gpu); !s) return s;
    // The lanes start in a node next to the GPU (the staging's side); each scatter then works on
    // every sequence in the arena of its node.
    const int lane_node = gpu_local_nodes_.empty() ? 0 : gpu_local_nodes_.front();
    scatters_ = std::make_unique<cpu::ScatterLanes>(opt_.n_layers, *pool_->arenas()[static_cast<std::size_t>(lane_node)]);
    HGCA_CUDA_TRY(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    HGCA_CUDA_TRY(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking));
    if (Status s = gpu::HostCalls::create(opt_.handoff, &host_calls_); !s) return s;
    for (cudaEvent_t* e : {&fork_, &plan_ready_, &cpu_done_, &staged_, &done_}) {
      HGCA_CUDA_TRY(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    }
    // Per layer: K of every ring, V of every ring, then the MAW of every (ring, KV head, slot).
    ring_bytes_ = static_cast<std::size_t>(opt_.n_kv_heads) * window_tokens_ * opt_.head_dim * elem_size_;
    kv_bytes_ = ring_bytes_ * opt_.max_sequences;
    // Each layer starts 256-byte aligned: the window's kernels read and write K and V rows with 16-byte
    // accesses, and the MAW before the next layer is 4 bytes an entry (S · Hkv · W of them, any count).
    const std::size_t maw_bytes = static_cast<std::size_t>(opt_.max_sequences) * opt_.n_kv_heads * window_tokens_ * sizeof(float);
    layer_bytes_ = (2 * kv_bytes_ + maw_bytes + 255) / 256 * 256;
    const std::size_t bytes = layer_bytes_ * opt_.n_layers;
    if (cudaMalloc(&slab_, bytes) != cudaSuccess) {
      cudaGetLastError();
      return error(StatusCode::kOutOfMemory,
                   "create: the window slab needs {} MiB of device memory (n_layers {} × max_sequences {} × "
                   "W {} × n_kv_heads {} × head_dim {} × K,V); lower max_sequences or the window",
                   bytes >> 20, opt_.n_layers, opt_.max_sequences, window_tokens_, opt_.n_kv_heads, opt_.head_dim);
    }
    for (int32_t r = opt_.max_sequences - 1; r >= 0; --r) free_rings_.push_back(r);
    // CUDA loads a kernel at its first launch (lazy loading, the default since CUDA 12.2): the call
    // that first launches it would pay the load, and the first call of a fresh runtime made inside
    // a stream capture would load modules there. Every kernel this runtime launches is loaded now.
    HGCA_CUDA_TRY(gpu::load_window_attention_kernels(window_params()));
    HGCA_CUDA_TRY(gpu::load_window_commit_kernels());
    HGCA_CUDA_TRY(merge::load_merge_kernel(opt_.dtype));
    if (overflow_on_) {
      HGCA_CUDA_TRY(gpu::load_sparse_attention_kernels(opt_.dtype, opt_.head_dim));
      HGCA_CUDA_TRY(merge::load_merge_kernel(DType::kFloat32));
    }
    if (Status s = init_store_memory(machine, store_registration(device_)); !s) return s;
    // Decode steps of every sequence, a block of each evicted, never grow a buffer (nor wait):
    // the GPU's sparse part with as many key splits as its plan may choose.
    gpu::WindowAttentionParams wp = window_params();
    wp.batch = opt_.max_sequences;
    gpu::SparseAttentionPlan most_split;
    most_split.kv_splits = gpu::kMaxSparseSplits;
    most_split.split_pairs = group;
    const int32_t items = opt_.max_sequences * opt_.n_kv_heads;
    return reserve(wp, opt_.max_sequences, static_cast<int64_t>(opt_.max_sequences) * opt_.block_tokens,
                   static_cast<int32_t>(window_tokens_), 1, items,
                   gpu::sparse_attention_workspace_bytes(most_split, items, opt_.head_dim), false);
  }

  Backend backend() const override { return Backend::kCuda; }
  HostHandoff handoff() const override { return host_calls_->mode(); }

  Status attention(int32_t layer, const TensorView& q, const TensorView& k, const TensorView& v,
                   const MutableTensorView& out, float* lse_out, void* stream) override {
    if (Status s = reported_as(deferred_error(), "attention: layer {}", layer); !s) return s;
    if (Status s = validate_call(layer, q, k, v, out, lse_out); !s) return s;
    if (Status s = check_device_pointers(q, k, v, out, lse_out); !s) return s;
    return guarded("attention", [&]() -> Status {
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
    if (!k_out || !v_out) return error(StatusCode::kInvalidArgument, "read_kv: {} is null", k_out ? "v_out" : "k_out");
    if (in_step_) return error(StatusCode::kFailedPrecondition, "read_kv: a step is open; read between end_step and begin_step");
    if (Status s = reported_as(drain(), "read_kv: layer {}, seq_id = {}", layer, id); !s) return s;
    return guarded("read_kv", [&]() -> Status {
      auto* ko = static_cast<std::byte*>(k_out);
      auto* vo = static_cast<std::byte*>(v_out);
      const int64_t m = read_store(seq->layers[layer].dram(), ko, vo);
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

  // --- the host side of a call (HostCalls: its thread, or CUDA's callback thread; no CUDA calls) ---

  /// The plan: the layer's store is brought up to date (its last scatter, the previous call's
  /// staged rows) and finished re-evaluations are published, so the context sets are final for
  /// this call; then the overflow policy picks the items the GPU attends and writes the GPU's items.
  void plan_part(CallJob& job) {
    run_async("the store update", [&] {
      const auto t0 = std::chrono::steady_clock::now();
      scatters_->wait(job.layer);
      if (job.frees_lane >= 0) scatters_->wait(job.frees_lane);
      for (const std::shared_ptr<CallJob>& rows : job.unpushed) {
        scatters_->wait(rows->layer);  // its layer's earlier rows come first
        commit_window(*rows);
      }
      job.unpushed.clear();
      transfer_clock_.add(job.layer, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    });
    if (overflow_on_) write_empty_items(job);  // the GPU's side unless the plan below completes
    run_async("the overflow plan", [&] {
      publish(*job.step, job.layer);
      if (overflow_on_) plan_overflow_items(job);
    });
  }

  /// The CPU's side: the context sets the plan left to it are attended, and this call's
  /// re-evaluations take their snapshot of the store (as it was before this call's eviction).
  void cpu_part(CallJob& job) {
    run_async("the CPU's sparse attention", [&] {
      sparse_attention(*job.step, job.layer, q_host_.get(), o_cpu_.as<float>(), lse_cpu_.as<float>(), job.on_gpu);
    }, /*fatal=*/true);
    run_async("the re-evaluation", [&] {
      job.reevaluations = snapshot_reevaluations(*job.step, job.layer, q_host_.get());
      if (!job.evicts && !job.reevaluates_after_merge) start_reevaluations(*job.step, job.layer, job.reevaluations);
    });
    if (!job.evicts && !job.reevaluates_after_merge) job.finished.store(true, std::memory_order_release);
  }

  /// After the merge of a call that evicts (its evicted MAW and new rows are staged): the scatter
  /// into the store starts on the CPU pool and the stream goes on. Appends then start their
  /// re-evaluation (for one that evicts nothing in deterministic mode, right here).
  void commit_part(CallJob& job) {
    if (!job.evicts) {
      run_async("the re-evaluation", [&] { start_reevaluations(*job.step, job.layer, job.reevaluations); });
      job.finished.store(true, std::memory_order_release);
      return;
    }
    scatters_->start(job.layer, [this, &job] {
      run_async("the store update", [&] {
        commit_window(job);
        start_reevaluations(*job.step, job.layer, job.reevaluations);
      });
      job.finished.store(true, std::memory_order_release);
    });
  }

 private:
  std::unique_ptr<SequenceState> make_sequence(int32_t node) override {
    auto seq = std::make_unique<CudaSequence>();
    seq->windows.resize(static_cast<std::size_t>(opt_.n_layers));
    seq->layers.reserve(static_cast<std::size_t>(opt_.n_layers));
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      seq->layers.emplace_back(window_tokens_, opt_.block_tokens, opt_.n_kv_heads, opt_.head_dim, elem_size_,
                               store_memory_, node);
    }
    // add_sequence bounded the count by max_sequences, and every sequence gives its ring back.
    if (free_rings_.empty()) throw std::logic_error("add_sequence: no free window ring (one was lost)");
    seq->ring = free_rings_.back();
    free_rings_.pop_back();
    return seq;
  }
  void drop_sequence(SequenceState& seq) override {
    free_rings_.push_back(static_cast<CudaSequence&>(seq).ring);
    // Rows still waiting in staging (only captured calls' can: drain() brought the others in).
    auto release = [&](CallJob& job) {
      const StepBatch& step = *job.step;
      for (int32_t i = 0; i < step.size(); ++i) {
        if (step.seqs[i] != &seq) continue;
        job.released.resize(static_cast<std::size_t>(step.size()));
        job.released[i] = 1;
      }
    };
    for (const auto& job : unpushed_) {
      if (job) release(*job);
    }
    for (const auto& job : captured_jobs_) {
      for (const auto& rows : job->unpushed) release(*rows);
    }
  }
  const kvmgr::DramStore& dram(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const CudaSequence&>(seq).layers[layer].dram();
  }
  kvmgr::DramStore& dram(SequenceState& seq, int32_t layer) override {
    return static_cast<CudaSequence&>(seq).layers[layer].dram();
  }
  int64_t window_size(const SequenceState& seq, int32_t layer) const override {
    return static_cast<const CudaSequence&>(seq).windows[layer].size;
  }
  kvmgr::DramStore::PreparedAppend step_blocks(const SequenceState& seq, int32_t layer, int32_t n_new) const override {
    const auto& s = static_cast<const CudaSequence&>(seq);
    return s.layers[layer].allocate_blocks(s.windows[layer].size, n_new);
  }

  Status drain() const override {
    if (enqueued_outside_capture_) HGCA_CUDA_TRY(cudaEventSynchronize(done_));
    settle();
    return deferred_error();
  }
  void backend_stats(int32_t layer, LayerStats* st) const override {
    st->transfer_seconds = transfer_clock_.seconds(layer);
    std::lock_guard lock(tally_mutex_);
    const OverflowTally& t = overflow_tally_[layer];
    st->overflow_calls = t.calls;
    st->overflow_items = t.items;
    st->overflow_bytes = t.bytes;
    st->overflow_rows = t.rows;
    st->overflow_predicted_cpu_seconds = t.cpu_s;
    st->overflow_predicted_gpu_seconds = t.gpu_s;
  }

  /// Once the streams are idle: waits for the scatters and brings the rows still staged into the
  /// host windows (not those of captured calls: their graph may not have run yet, unless
  /// `captured_too`: the next direct call is being enqueued, which would commit them anyway).
  void settle(bool captured_too = false) const {
    scatters_->wait_all();
    for (auto& job : unpushed_) {
      if (!job || (job->captured && !captured_too)) continue;
      run_async("the store update", [&] { commit_window(*job); });
      job.reset();
    }
  }

  /// FlashD2H's scatter of one call: each sequence's staged rows enter its host window, and the
  /// entries they push out go to its store with their staged MAW and are selected.
  void commit_window(CallJob& job) const {
    const StepBatch& step = *job.step;
    const std::size_t row_bytes = static_cast<std::size_t>(opt_.n_kv_heads) * opt_.head_dim * elem_size_;
    // Each sequence's failure is its own (reported by the next call): the others still scatter.
    auto scatter = [&](int32_t i, int32_t) {
      if (!job.released.empty() && job.released[i]) return;
      run_async("the store update", [&] {
        const int64_t row = step.offsets[i];
        try {
          static_cast<CudaSequence*>(step.seqs[i])->layers[job.layer].evict_and_insert(
              job.k + row * row_bytes, job.v + row * row_bytes, step.n_new[i],
              job.maw + job.staging_row[i] * opt_.n_kv_heads, selection(),
              job.prepared.empty() ? kvmgr::DramStore::PreparedAppend{} : std::exchange(job.prepared[i], {}));
        } catch (const kvmgr::EvictedUnselected&) {
          throw;  // every row is in: reported once, and the runtime goes on
        } catch (const std::exception& e) {
          throw HostWindowBehind(job.layer, e.what());
        }
      });
    };
    // A decode step's few rows are copied here: entering the arenas would cost more than the copy.
    constexpr std::size_t kInlineBytes = std::size_t{256} << 10;
    if (!job.evicts && 2 * static_cast<std::size_t>(step.tokens()) * row_bytes <= kInlineBytes) {
      for (int32_t i = 0; i < step.size(); ++i) scatter(i, 0);
      return;
    }
    // Each sequence in the arena of its node, where its store lives. Without memory to hand the
    // work to the pool, the sequences not yet scattered are scattered here: rows never stay behind
    // (the caller would report that as memory running out, once, and go on without them).
    std::vector<uint8_t> scattered;
    try {
      scattered.assign(static_cast<std::size_t>(step.size()), 0);
      for_each_by_node(step, 1, [&](int32_t i, int32_t part) {
        scatter(i, part);
        scattered[i] = 1;
      });
    } catch (const std::bad_alloc&) {
      for (int32_t i = 0; i < step.size(); ++i) {
        if (scattered.empty() || !scattered[i]) scatter(i, 0);
      }
    }
  }

  /// Every item of the call's GPU sparse launch, empty (n = 0: it writes o = 0, lse = -inf), and
  /// none marked as the GPU's for the CPU's part (a graph's job keeps the marks of its last run).
  void write_empty_items(CallJob& job) {
    job.on_gpu.clear();
    const StepBatch& step = *job.step;
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim, g = hq / hkv;
    auto* items = sparse_items_.as<gpu::SparseAttentionItem>();
    for (int32_t i = 0; i < step.size(); ++i) {
      for (int32_t h = 0; h < hkv; ++h) {
        const int64_t row = step.offsets[i] * hq + static_cast<int64_t>(h) * g;
        items[i * hkv + h] = {nullptr, nullptr, 0, job.q + row * d * static_cast<int64_t>(elem_size_),
                              static_cast<int64_t>(hq) * d, step.n_new[i], o_sparse_.as<float>() + row * d,
                              static_cast<int64_t>(hq) * d, lse_sparse_.as<float>() + row, hq};
      }
    }
  }

  /// The overflow policy for one call, in its plan (the items written empty already): the items it
  /// moves get their context caches, and job.on_gpu marks them for the CPU's part.
  void plan_overflow_items(CallJob& job) {
    const StepBatch& step = *job.step;
    const int32_t hkv = opt_.n_kv_heads, d = opt_.head_dim;
    const int64_t row_bytes = int64_t{2} * d * static_cast<int64_t>(elem_size_);  // one entry's K and V
    std::vector<OverflowItem> costs(static_cast<std::size_t>(step.size()) * hkv);
    for (int32_t i = 0; i < step.size(); ++i) {
      for (int32_t h = 0; h < hkv; ++h) {
        const auto size = static_cast<int64_t>(dram(*step.seqs[i], job.layer).store(h).context.size());
        costs[i * hkv + h] = {size * row_bytes, step.n_new[i]};
      }
    }
    OverflowPlan plan;
    // The options were validated: a failure here is a bug.
    if (const Status s = opt_.overflow == OverflowMode::kAlways
                             ? plan_overflow_all(costs, job.window_s, rates_, &plan)
                             : plan_overflow(costs, job.window_s, rates_, opt_.overflow_margin, &plan);
        !s) {
      throw std::logic_error(s.message());
    }
    job.on_gpu.assign(costs.size(), 0);
    auto* items = sparse_items_.as<gpu::SparseAttentionItem>();
    int64_t moved = 0, bytes = 0, rows = 0;
    for (const int32_t i : plan.gpu_items) {
      const kvmgr::ContextCache& cache = dram(*step.seqs[i / hkv], job.layer).store(i % hkv).context_cache;
      // A cache in a chunk grown inside a host function is registered later, by the store memory's
      // thread; until then the GPU cannot read it, and the CPU keeps the item (rare: chunks are
      // normally grown ahead, registered).
      if (!cache.device_readable()) continue;
      const OverflowItem& c = costs[static_cast<std::size_t>(i)];
      job.on_gpu[static_cast<std::size_t>(i)] = 1;
      items[i].k = cache.k();
      items[i].v = cache.v();
      items[i].n = c.kv_bytes / row_bytes;
      items[i].segments = cache.segments();
      items[i].segment_rows = cache.segment_rows();
      ++moved;
      bytes += c.kv_bytes;
      rows += c.rows;
    }
    std::lock_guard lock(tally_mutex_);
    OverflowTally& t = overflow_tally_[job.layer];
    t.calls += moved > 0 ? 1 : 0;
    t.items += moved;
    t.bytes += bytes;
    t.rows += rows;
    t.cpu_s = plan.cpu_s;
    t.gpu_s = plan.gpu_s;
  }

  /// Runs `f`, a part of a call's host side, keeping its error for the next call to report.
  /// `fatal`: a failure leaves the call's output wrong, so it stays (kInternal), even memory
  /// running out. Throws nothing: it runs in host functions, where an exception would terminate.
  template <typename F>
  void run_async(const char* what, F&& f, bool fatal = false) const noexcept {
    StatusCode code = StatusCode::kInternal;  // until known: an error whose kind was lost must stay
    try {
      Status s = guarded(nullptr, [&]() -> Status {
        try {
          f();
        } catch (const std::bad_alloc&) {
          if (!fatal) code = StatusCode::kOutOfMemory;  // known before its message is made
          throw;
        }
        return Status::ok();
      });
      if (s) return;
      code = fatal ? StatusCode::kInternal : s.code();
      if (fatal) {
        s = Status(code, s.message() + "; that call's output is wrong, and the runtime cannot go on (destroy it "
                                       "and create another)");
      }
      report_later(Status(code, fmt::format("{} failed: {}", what, s.message())));
    } catch (const std::bad_alloc&) {
      // No memory even for the message: the error stands with one that takes none (std::string
      // keeps up to 15 characters in place).
      report_later(Status(code, "out of memory"));
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
      // The kernels move 16 bytes at a time (the window's insert, the merge's stores); a misaligned
      // access would end the CUDA context, so it is refused here, before anything is enqueued.
      const std::size_t align = ptr == lse_out ? sizeof(float) : 16;
      if (reinterpret_cast<std::uintptr_t>(ptr) % align != 0) {
        return error(StatusCode::kInvalidArgument, "attention: {} = {} is not {}-byte aligned, expected {}-byte "
                     "alignment (as cudaMalloc gives; the CUDA kernels move 16 bytes at a time)", name, ptr, align, align);
      }
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
    // An error left pending on this thread by earlier CUDA work would come out of the first kernel
    // launch's check below, with part of the call enqueued: reported (and so cleared) here instead.
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      return cuda_status("an error pending on this thread from earlier CUDA work (cudaGetLastError); "
                         "nothing was enqueued", e);
    }
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
    std::vector<OverflowItem> window_seqs;  // each sequence's window K+V and rows, for window_s
    window_seqs.reserve(static_cast<std::size_t>(step.size()));
    int32_t max_w = 0, max_new = 0;
    // Bounds for the GPU's sparse part: a context set holds at most its store, which is now the
    // sequence's history less its window.
    gpu::SparseAttentionShape sparse_shape{step.size() * hkv, 0, 0, 1};
    for (int32_t i = 0; i < step.size(); ++i) {
      auto& seq = *static_cast<CudaSequence*>(step.seqs[i]);
      const WindowState w = seq.windows[layer];
      const int32_t n = step.n_new[i];
      const auto evict = static_cast<int32_t>(kvmgr::evict_count(w.size, window_tokens_, n, opt_.block_tokens));
      wseqs[i] = {step.offsets[i], step.offsets[i] * hkv, n, w.size, w.tail, seq.ring};
      cseqs[i] = {step.offsets[i], step.offsets[i] * hkv, staged, n, w.size, w.tail, seq.ring, evict};
      job->staging_row.push_back(staged);
      staged += evict;
      max_w = std::max(max_w, w.size);
      max_new = std::max(max_new, n);
      window_seqs.push_back({static_cast<int64_t>(w.size + n) * hkv * 2 * d * static_cast<int64_t>(elem_size_), n});
      const int64_t store_bound = seq.length - w.size;
      sparse_shape.max_n = std::max(sparse_shape.max_n, store_bound);
      sparse_shape.total_n += store_bound * hkv;
      if (opt_.deterministic && n >= opt_.reeval_min_tokens) job->reevaluates_after_merge = true;
    }
    sparse_shape.max_rows = max_new;
    const gpu::SparseAttentionPlan sparse_plan = plan_sparse_attention(sparse_shape, hq / hkv, sm_count_);
    const std::size_t sparse_ws_bytes =
        overflow_on_ ? gpu::sparse_attention_workspace_bytes(sparse_plan, sparse_shape.n_items, d) : 0;
    job->q = static_cast<const std::byte*>(q);
    job->window_s = overflow_window_seconds(window_seqs, rates_, window_decode_path_);

    gpu::WindowAttentionParams wp = window_params();
    wp.seqs = wseqs.data();
    wp.batch = step.size();
    if (Status s = reserve(wp, tokens, staged, max_w, max_new, sparse_shape.n_items, sparse_ws_bytes, capturing); !s) {
      return s;
    }
    // FlashD2H: the blocks this call's rows start in the host's windows, those begin_step reserved
    // (see the top of the file), or, for a window of another size, allocated now, so that running
    // out fails this call before anything changes. Should the call fail before its plan's host
    // function is launched, they go back to the reservation, for the call made again.
    struct ReturnReserved {
      const StepBatch& step;
      int32_t layer;
      CallJob* job;
      ~ReturnReserved() {
        for (std::size_t i = 0; job && i < job->prepared.size(); ++i) {
          if (job->prepared[i].count > 0) step.seqs[i]->reserved[layer] = std::move(job->prepared[i]);
        }
      }
    } return_reserved{step, layer, job.get()};
    for (int32_t i = 0; i < step.size(); ++i) {
      auto& seq = *static_cast<CudaSequence*>(step.seqs[i]);
      const kvmgr::MirroredKv& kv = seq.layers[layer];
      const int64_t count = kv.allocate_count(wseqs[i].w, step.n_new[i]);
      if (count == 0) continue;
      if (job->prepared.empty()) job->prepared.resize(static_cast<std::size_t>(step.size()));
      auto& reserved = seq.reserved[layer];
      job->prepared[i] = reserved.count == count ? std::exchange(reserved, {}) : kv.allocate_blocks(wseqs[i].w, step.n_new[i]);
    }
    const std::size_t slot = slot_next_;
    Buffer& staging = staging_[slot];
    const std::size_t rows = static_cast<std::size_t>(tokens) * hq;
    const std::size_t new_bytes = static_cast<std::size_t>(tokens) * hkv * d * elem_size_;  // of k, of v
    job->k = staging.get();
    job->v = staging.get() + new_bytes;
    job->maw = reinterpret_cast<const float*>(staging.get() + 2 * new_bytes);
    job->evicts = staged > 0;
    job->reevaluates_after_merge &= !job->evicts;  // a scatter starts them anyway

    // D: the new rows go to the host at once (they wait there until the layer's next call), after
    // the last plan on C: the layer's previous plan has taken the rows of the call before it out
    // of this slot. The caller's stream orders that too, unless calls come on several streams; a
    // capture, which must not wait for work outside it, relies on it.
    // An event last recorded in a capture cannot be waited for outside it; after a captured call
    // the caller's stream orders the graph's plan before this call (fork_).
    HGCA_CUDA_TRY(cudaEventRecord(fork_, stream));
    HGCA_CUDA_TRY(cudaStreamWaitEvent(d2h_, fork_, 0));
    if (!capturing && !plan_ready_captured_) HGCA_CUDA_TRY(cudaStreamWaitEvent(d2h_, plan_ready_, 0));
    // Where the clock times the copies, its end event marks them staged (one event record fewer).
    cudaEvent_t staged_at = staged_;
    if (Status s = timed(layer, d2h_, !capturing, [&]() -> Status {
          HGCA_CUDA_TRY(cudaMemcpyAsync(staging.get(), k, new_bytes, cudaMemcpyDeviceToHost, d2h_));
          HGCA_CUDA_TRY(cudaMemcpyAsync(staging.get() + new_bytes, v, new_bytes, cudaMemcpyDeviceToHost, d2h_));
          if (capturing) HGCA_CUDA_TRY(cudaEventRecord(staged_, d2h_));
          return Status::ok();
        }, &staged_at);
        !s) {
      return s;
    }

    // C: the plan, then the query goes to the CPU (the stream has produced it). The plan brings the
    // layer's previous call's staged rows into the host windows: from here on they are the job's.
    // Its host function holds the job from its launch on (part of the launch may be on the stream
    // even where it fails): should the call fail from here (a CUDA error of the device or the
    // stream), the job is kept (its room reserved first) and the runtime stops.
    HGCA_CUDA_TRY(cudaStreamWaitEvent(side_, fork_, 0));
    if (captured_jobs_.size() == captured_jobs_.capacity()) captured_jobs_.reserve(2 * captured_jobs_.size() + 1);
    job->unpushed.reserve(2);  // the two moves below then cannot fail halfway (rows would be lost)
    if (unpushed_[layer]) job->unpushed.push_back(std::move(unpushed_[layer]));
    // The next call copies into the next slot once this call's plan has run: the plan empties it.
    slot_next_ = (slot + 1) % staging_.size();
    if (const std::shared_ptr<CallJob> last = slot_user_[slot_next_].lock(); last && last != job) {
      if (last->evicts) {
        job->frees_lane = last->layer;
      } else if (unpushed_[last->layer] == last) {
        job->unpushed.push_back(std::move(unpushed_[last->layer]));
      }
    }
    slot_user_[slot] = job;
    return_reserved.job = nullptr;  // the job keeps them from here on, whatever happens
    const AbandonOnFailure abandon_on_failure{this, &job};
    if (Status s = launch_part<&CudaRuntime::plan_part>(side_, *job, capturing); !s) return s;
    HGCA_CUDA_TRY(cudaEventRecord(plan_ready_, side_));
    plan_ready_captured_ = capturing;
    HGCA_CUDA_TRY(cudaMemcpyAsync(q_host_.get(), q, rows * d * elem_size_, cudaMemcpyDeviceToHost, side_));
    if (Status s = launch_part<&CudaRuntime::cpu_part>(side_, *job, capturing); !s) return s;
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

    // S: the evicted entries' MAW, final now, goes to staging before the insert reuses their slots.
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
    cp.staging_maw = const_cast<float*>(job->maw);
    cp.seqs = cseqs.data();
    cp.batch = step.size();
    if (job->evicts) {
      if (Status s = timed(layer, stream, !capturing, [&]() -> Status {
            HGCA_CUDA_TRY(gpu::launch_evicted_maw(cp, stream));
            return Status::ok();
          });
          !s) {
        return s;
      }
    }

    // S: the GPU's sparse part once the plan has written its items.
    if (overflow_on_) {
      HGCA_CUDA_TRY(cudaStreamWaitEvent(stream, plan_ready_, 0));
      gpu::SparseAttentionParams sp;
      sp.dtype = opt_.dtype;
      sp.group = hq / hkv;
      sp.head_dim = d;
      sp.sm_scale = sm_scale_;
      sp.items = sparse_items_.as<gpu::SparseAttentionItem>();
      sp.n_items = sparse_shape.n_items;
      sp.plan = sparse_plan;
      sp.workspace = sparse_ws_.get();
      sp.workspace_bytes = sparse_ws_.capacity();
      HGCA_CUDA_TRY(gpu::launch_sparse_attention(sp, stream));
    }

    // S: the merge of the window's state, the CPU's (the stream waits for it) and the GPU's sparse
    // part's, in one launch.
    HGCA_CUDA_TRY(cudaStreamWaitEvent(stream, cpu_done_, 0));
    const merge::MergeSide sides[3] = {{o_gpu_.as<float>(), lse_gpu_.as<float>()},
                                       {o_cpu_.as<float>(), lse_cpu_.as<float>()},
                                       {o_sparse_.as<float>(), lse_sparse_.as<float>()}};
    HGCA_CUDA_TRY(merge::launch_merge_states(std::span(sides, overflow_on_ ? 3 : 2), static_cast<int64_t>(rows), d,
                                             opt_.dtype, out, lse_out, stream));

    // S: insertion. The call ends once its new rows are staged (the caller may then reuse k, v, and
    // a graph capture joins C back); an eviction's scatter then starts.
    HGCA_CUDA_TRY(gpu::launch_window_insert(cp, stream));
    if (Status s = timed(layer, stream, !capturing && job->evicts, [&]() -> Status {
          HGCA_CUDA_TRY(cudaStreamWaitEvent(stream, staged_at, 0));
          if (job->evicts || job->reevaluates_after_merge) {
            return launch_part<&CudaRuntime::commit_part>(stream, *job, capturing);
          }
          return Status::ok();
        });
        !s) {
      return s;
    }
    if (!capturing) {
      HGCA_CUDA_TRY(cudaEventRecord(done_, stream));
      enqueued_outside_capture_ = true;
    }

    // The enqueue-time window state follows the calls just enqueued.
    for (int32_t i = 0; i < step.size(); ++i) {
      auto& w = static_cast<CudaSequence*>(step.seqs[i])->windows[layer];
      const int32_t evict = cseqs[i].evict;
      const int32_t popped = std::min(evict, w.size);
      const int32_t kept_new = step.n_new[i] - std::max(0, evict - w.size);
      w.tail = static_cast<int32_t>((w.tail + popped) % window_tokens_);
      w.size = w.size - popped + kept_new;
    }
    if (!job->evicts) unpushed_[layer] = job;
    // Event queries would invalidate a global-mode capture.
    if (!capturing) transfer_clock_.collect(kTransferStretchesWaiting);
    retire();
    if (capturing) {
      captured_jobs_.push_back(std::move(job));
    } else {
      jobs_.push_back(std::move(job));
    }
    return Status::ok();
  }

  /// Keeps a job whose enqueue failed once its plan's host function was being launched (it may
  /// still run), unless the job has reached jobs_ or captured_jobs_ (moved from), and makes every
  /// later call fail.
  struct AbandonOnFailure {
    CudaRuntime* runtime;
    std::shared_ptr<CallJob>* job;
    ~AbandonOnFailure() {
      if (*job) runtime->abandon(std::move(*job));
    }
  };
  void abandon(std::shared_ptr<CallJob> job) noexcept {
    {
      std::lock_guard lock(error_mutex_);
      async_error_ = std::move(abandoned_);  // made ahead: nothing here allocates
    }
    captured_jobs_.push_back(std::move(job));  // room reserved by enqueue; kept until it finishes
  }

  /// Enqueues Part(job) on `stream` as a host function (the stream waits until it has returned).
  template <void (CudaRuntime::*Part)(CallJob&)>
  Status launch_part(cudaStream_t stream, CallJob& job, bool capturing) {
    return host_calls_->launch(stream, [](void* p) {
      auto* j = static_cast<CallJob*>(p);
      (j->runtime->*Part)(*j);
    }, &job, capturing, /*once=*/true);  // a captured step's graph is launched once
  }

  /// Enqueues `work` on `stream`, between CUDA events that the transfer clock reads when `on`;
  /// `end` (optional) then gets the end's event.
  template <typename F>
  Status timed(int32_t layer, cudaStream_t stream, bool on, F&& work, cudaEvent_t* end = nullptr) {
    Status s = on ? transfer_clock_.begin(layer, stream) : Status::ok();
    if (s) s = work();
    if (s && on) s = transfer_clock_.end(stream, end);
    if (!s && on) transfer_clock_.cancel();
    return s;
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

  /// Bytes of a staging slot for a call of `tokens` new tokens and `staged` evicted entries: its
  /// new K rows, its new V rows, the evicted entries' MAW.
  std::size_t staging_bytes(int64_t tokens, int64_t staged) const {
    return 2 * static_cast<std::size_t>(tokens) * opt_.n_kv_heads * opt_.head_dim * elem_size_ +
           static_cast<std::size_t>(staged) * opt_.n_kv_heads * sizeof(float);
  }

  /// FlashD2H's staging slots for calls of `call_bytes` (cpu::staging_slots).
  std::size_t staging_slots(std::size_t call_bytes) const {
    return cpu::staging_slots(opt_.staging_limit_bytes, call_bytes, opt_.n_layers);
  }

  /// Grows the buffers a call of `tokens` new tokens and `staged` evicted entries needs (every
  /// staging slot: the step's other layers, and its next step, are likely to need as much), with
  /// `items` items and `sparse_workspace` bytes of workspace for the GPU's sparse part.
  /// Growing frees buffers that enqueued work may still use, so it first waits for that work (and
  /// for the scatters, and brings the rows still staged into the host windows), which a stream
  /// being captured cannot do. init() sizes them for decode steps of max_sequences.
  Status reserve(const gpu::WindowAttentionParams& wp, int64_t tokens, int64_t staged, int32_t max_w,
                 int32_t max_new, int32_t items, std::size_t sparse_workspace, bool capturing) {
    const auto rows = static_cast<std::size_t>(tokens) * opt_.n_q_heads;
    const std::size_t d = opt_.head_dim;
    std::vector<std::pair<Buffer*, std::size_t>> needs = {
        {&o_gpu_, rows * d * sizeof(float)},
        {&lse_gpu_, rows * sizeof(float)},
        {&obs_, static_cast<std::size_t>(tokens) * opt_.n_kv_heads * sizeof(float)},
        {&attention_ws_, gpu::window_attention_workspace_bytes(wp, tokens, max_w, max_new)},
        {&q_host_, rows * d * elem_size_},
        {&o_cpu_, rows * d * sizeof(float)},
        {&lse_cpu_, rows * sizeof(float)}};
    const std::size_t slot_bytes = staging_bytes(tokens, staged);
    if (overflow_on_) {
      needs.insert(needs.end(), {{&sparse_items_, static_cast<std::size_t>(items) * sizeof(gpu::SparseAttentionItem)},
                                 {&o_sparse_, rows * d * sizeof(float)},
                                 {&lse_sparse_, rows * sizeof(float)},
                                 {&sparse_ws_, sparse_workspace}});
    }
    bool grow = false;
    for (const auto& [buffer, bytes] : needs) grow |= !buffer->fits(bytes);
    grow |= staging_.empty() || std::any_of(staging_.begin(), staging_.end(), [&](const Buffer& b) { return !b.fits(slot_bytes); });
    if (!grow) return Status::ok();
    if (capturing) {
      return error(StatusCode::kFailedPrecondition,
                   "attention: this step needs larger buffers than earlier steps ({} new tokens, {} evicted), and the "
                   "stream is being captured; run one step of this shape before capturing it", tokens, staged);
    }
    HGCA_CUDA_TRY(cudaDeviceSynchronize());
    settle(true);  // every row still staged leaves the slots about to be reallocated
    for (const auto& [buffer, bytes] : needs) {
      if (Status s = buffer->reserve(bytes); !s) return s;
    }
    staging_call_bytes_ = std::max(staging_call_bytes_, slot_bytes);
    const std::size_t slots = staging_slots(staging_call_bytes_);
    while (staging_.size() > slots) staging_.pop_back();
    while (staging_.size() < slots) staging_.emplace_back(Buffer::Kind::kMapped);
    slot_user_.assign(slots, {});
    slot_next_ = 0;
    for (Buffer& slot : staging_) {
      if (Status s = slot.reserve(slot_bytes); !s) return s;
    }
    return Status::ok();
  }

  /// Frees the jobs whose host functions have all run: direct ones in order, captured ones (their
  /// graph is launched once, see hgca.hpp) in any order.
  void retire() {
    while (!jobs_.empty() && jobs_.front()->finished.load(std::memory_order_acquire)) jobs_.pop_front();
    std::erase_if(captured_jobs_, [](const auto& j) { return j->finished.load(std::memory_order_acquire); });
  }

  int device_ = 0;
  int sm_count_ = 1;
  cudaStream_t side_ = nullptr;
  cudaStream_t d2h_ = nullptr;  // FlashD2H's copies of the new rows to staging
  cudaEvent_t fork_ = nullptr, plan_ready_ = nullptr, cpu_done_ = nullptr, staged_ = nullptr, done_ = nullptr;
  bool plan_ready_captured_ = false;  // plan_ready_ was last recorded in a capture
  void* slab_ = nullptr;
  std::size_t ring_bytes_ = 0, kv_bytes_ = 0, layer_bytes_ = 0;  // one ring's K; every ring's K; a layer
  std::vector<int32_t> free_rings_;
  bool enqueued_outside_capture_ = false;

  Buffer o_gpu_{Buffer::Kind::kDevice}, lse_gpu_{Buffer::Kind::kDevice}, obs_{Buffer::Kind::kDevice};
  Buffer attention_ws_{Buffer::Kind::kDevice};
  Buffer q_host_{Buffer::Kind::kPinned};
  Buffer o_cpu_{Buffer::Kind::kMapped}, lse_cpu_{Buffer::Kind::kMapped};
  // FlashD2H's staging: slots that the calls of every layer take in turn (see the top of the file);
  // mapped, so that the evicted-MAW kernel writes it in place.
  std::deque<Buffer> staging_;
  std::size_t staging_call_bytes_ = 0;  // the largest call's staging so far: how many slots fit
  std::size_t slot_next_ = 0;           // the slot the next call takes
  std::vector<std::weak_ptr<CallJob>> slot_user_;  // per slot, the last call that took it
  /// Per layer: its last call when that call's rows still wait in staging for the host window.
  mutable std::vector<std::shared_ptr<CallJob>> unpushed_;
  std::unique_ptr<cpu::ScatterLanes> scatters_;  // FlashD2H's scatters, one lane per layer; set by init
  std::unique_ptr<gpu::HostCalls> host_calls_;    // the streams' hand-offs to the host side; set by init
  std::deque<std::shared_ptr<CallJob>> jobs_;  // enqueued directly, until retired
  /// Jobs inside a graph: its host functions may run whenever it is launched, so they live as long
  /// as we do (apart from jobs_, where one would hold back the retirement of every later job).
  std::vector<std::shared_ptr<CallJob>> captured_jobs_;
  mutable TransferClock transfer_clock_;

  // The overflow policy: the GPU's items (mapped: the plan writes them, the kernel reads them),
  // its partial state and its key splits' workspace.
  const OverflowRates rates_;
  const bool window_decode_path_;  // whether the window's decode path serves this shape (window_s)
  const bool overflow_on_;
  Buffer sparse_items_{Buffer::Kind::kMapped};
  Buffer o_sparse_{Buffer::Kind::kDevice}, lse_sparse_{Buffer::Kind::kDevice};
  Buffer sparse_ws_{Buffer::Kind::kDevice};
  /// Per layer, what the policy decided (LayerStats::overflow_*), written by the plans.
  struct OverflowTally {
    int64_t calls = 0, items = 0, bytes = 0, rows = 0;
    double cpu_s = 0.0, gpu_s = 0.0;  // the last plan's predictions
  };
  std::vector<OverflowTally> overflow_tally_;
  mutable std::mutex tally_mutex_;

  /// What every call reports once a call failed partway (abandon()).
  Status abandoned_{StatusCode::kInternal,
                    "an attention call failed after part of it was enqueued on the streams; the runtime cannot go on "
                    "(destroy it and create another)"};
};

}  // namespace

Status make_cuda_runtime(const Options& options, const Machine& machine, std::unique_ptr<Runtime>* out) {
  auto rt = std::make_unique<CudaRuntime>(options);
  if (Status s = rt->init(machine); !s) return s;
  *out = std::move(rt);
  return Status::ok();
}

}  // namespace hgca
