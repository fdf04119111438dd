// hgca public C++ API: a hybrid CPU-GPU attention operator runtime (HGCA, see DESIGN.md).
//
// Host-only header: no CUDA types. One Runtime serves one model (its layers, heads and head dim)
// and any number of sequences. Per step: begin_step(batch) → attention(layer) for every layer →
// end_step() (or abort_step() before the first attention). Every call returns a Status; a failed
// call names the argument, the value and what was expected, and leaves the runtime as it was.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace hgca {

/// Element type of Q, K, V and O. Accumulation, MAW and LSE are always fp32.
enum class DType : int32_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

/// Where the window and its dense attention live. kAuto picks CUDA when it is built and a usable
/// GPU exists, the host otherwise.
enum class Backend : int32_t { kAuto = 0, kHost = 1, kCuda = 2 };

/// Instruction-set path of the CPU engine's sparse attention kernels. kAuto picks the best the CPU
/// has (CPUID); the others force one path (Runtime::create fails with kInvalidArgument where the CPU
/// lacks it, naming the paths it has). kAvx512Bf16 is kAvx512 with AVX512-BF16 dot products for bf16 K.
enum class CpuIsa : int32_t { kAuto = 0, kPortable = 1, kAvx2 = 2, kAvx512 = 3, kAvx512Bf16 = 4 };

/// Which NUMA node a sequence's store, context sets and CPU work go to, decided when it is added
/// (see src/cpu/placement.hpp). A node's load is its sequences' lengths per worker thread.
/// kAuto: balanced by load, preferring the GPU's local node(s) while that costs at most 25 %;
/// kBalanced: by load only; kGpuLocal: only the GPU's local node(s). The GPU's nodes are known for
/// the CUDA backend, from its device's PCI bus id, when hwloc sees that device; without them (the
/// host backend, or hwloc blind to the GPU) every mode balances by load.
enum class NumaPlacement : int32_t { kAuto = 0, kBalanced = 1, kGpuLocal = 2 };

/// The overflow policy of the CUDA backend (issue 5, item 3): per call, which (sequence, KV head)
/// context sets the GPU attends itself, reading them from host memory, instead of the CPU.
/// kAuto: a cost model over measured rates (Options::overflow_*) moves items when that shortens
/// the call's critical path by Options::overflow_margin; kOff: the CPU attends every context set;
/// kAlways: every non-empty context set moves (for tests and benchmarks). The host backend ignores
/// it; with more than 8 query heads per KV head the GPU's sparse kernel does not apply, so kAuto
/// acts as kOff there and kAlways is refused.
enum class OverflowMode : int32_t { kAuto = 0, kOff = 1, kAlways = 2 };

/// How the CUDA backend's streams hand work to its host side (each call's plan and CPU attention,
/// and the scatter of what it evicts). kPoll: stream memory operations on flags in pinned memory,
/// watched by a thread of the runtime that spins while calls are near (a few µs per hand-off, one
/// core busy while steps run); kCallback: CUDA host functions (cudaLaunchHostFunc: tens of µs each,
/// no thread of ours); kAuto: kPoll where the driver has stream memory operations, else kCallback.
/// The host backend ignores it.
enum class HostHandoff : int32_t { kAuto = 0, kPoll = 1, kCallback = 2 };

/// How rows are written into the DRAM store's blocks (evicted entries, and on the CUDA backend the
/// host's copy of each window, filled as rows arrive) and into a context cache's new span when it
/// doubles. kStreamed: non-temporal stores, which skip the caches: no line is read for ownership
/// before it is written, and the staging FlashD2H's scatter reads stays cached (FlashD2H into grown
/// stores 1.28–1.47× faster at 16 KB blocks). kCached: through the caches, where a re-evaluation
/// that reads the store soon after finds them. kAuto: kStreamed once the store memory in use
/// exceeds the machine's last-level cache (then the rows could not stay cached anyway), else
/// kCached. Either way a decode step's few rows, and head rows that are not whole 64-byte cache
/// lines, go through the caches. Results are the same bytes.
enum class StoreWrites : int32_t { kAuto = 0, kCached = 1, kStreamed = 2 };

enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,     ///< a shape, dtype, id or parameter is wrong
  kNotFound = 2,            ///< unknown sequence id, or a file that cannot be opened
  kFailedPrecondition = 3,  ///< call out of order (e.g. attention without begin_step)
  kOutOfMemory = 4,         ///< host or device memory exhausted
  kUnsupported = 5,         ///< valid, but not supported by this build or backend
  kInternal = 6,
};

const char* to_string(StatusCode code);
const char* to_string(DType dtype);
const char* to_string(Backend backend);
const char* to_string(CpuIsa isa);  ///< "auto", "portable", "avx2", "avx512", "avx512bf16"
const char* to_string(NumaPlacement placement);    ///< "auto", "balanced", "gpu_local"
const char* to_string(OverflowMode mode);          ///< "auto", "off", "always"
const char* to_string(HostHandoff handoff);        ///< "auto", "poll", "callback"
const char* to_string(StoreWrites writes);         ///< "auto", "cached", "streamed"
/// Bytes per element of `dtype`.
std::size_t dtype_size(DType dtype);

/// Whether this build contains CUDA code, and how many usable GPUs the CUDA runtime sees (0 when
/// built without CUDA or when the driver reports none).
bool built_with_cuda();
int cuda_device_count();

/// Result of every API call: a code and, unless ok, a message naming argument, value and expectation.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// Runtime configuration. Every field has a documented default; model shape has none and must be set.
struct Options {
  // --- model shape (required) ---
  int32_t n_layers = 0;    ///< L, attention layers
  int32_t n_q_heads = 0;   ///< Hq, query heads
  int32_t n_kv_heads = 0;  ///< Hkv, KV heads; Hq % Hkv == 0 (GQA group G = Hq / Hkv, 1 = MHA)
  int32_t head_dim = 0;    ///< D, a multiple of 8 in [8, 256] (another ≥ 1: kUnsupported)
  DType dtype = DType::kBFloat16;  ///< dtype of q, k, v, out and of the stored KV
  float sm_scale = 0.0f;   ///< score scale; 0 means 1/sqrt(head_dim)

  // --- the method (HGCA §3) ---
  int32_t window_blocks = 16;  ///< window W = window_blocks × block_tokens tokens per (layer, sequence), ≤ 2^24
  int32_t block_tokens = 64;   ///< eviction granularity: whole blocks leave the window
  float alpha = 0.1f;          ///< MAW update: maw ← (1 − alpha)·maw + alpha·a, in (0, 1]
  /// selection: keep entry when maw > beta / n_ref; 0 keeps everything (exact attention, as long as
  /// no kOutOfMemory about selection has been reported: see Runtime::attention's errors)
  float beta = 1.0f;
  /// Per KV head, keep at least this many store entries: those of highest MAW relative to the
  /// weights it was normalized over (maw × n_ref, what the threshold compares with beta), so that
  /// entries judged against windows and stores of different sizes rank fairly.
  int32_t min_keep = 4;
  int32_t reeval_min_tokens = 16;  ///< an append of ≥ this many tokens re-selects the store (§3.2.2)
  /// HGCA §3.3's merged heads: each run of this many adjacent KV heads has its context sets padded
  /// to equal length with their next entries by relative MAW (as min_keep); 1: no padding. It
  /// changes what is attended (padding adds entries); how the CPU engine groups work is
  /// max_packed_heads. In [1, n_kv_heads].
  int32_t heads_per_task = 1;

  // --- execution ---
  Backend backend = Backend::kAuto;
  /// Sequences alive at once. The CUDA backend pre-allocates every layer's window ring for this
  /// many sequences (L × max_sequences × W × Hkv × (D × 2 elements + a 4-byte MAW) of device
  /// memory, each layer rounded up to 256 bytes); add_sequence
  /// beyond it fails with kOutOfMemory on either backend.
  int32_t max_sequences = 16;
  /// CPU worker threads over all NUMA nodes, at most: 0 or more than the cores runs one per core
  /// (threads_per_node may ask for more, up to the hardware threads); cpu_stats() says how many run.
  /// Shared among the nodes in proportion to their cores; a share that ties goes to the GPU's node.
  int32_t threads = 0;
  /// Re-evaluation publishes before the next call (for tests). With the CUDA backend's overflow
  /// policy on, a context set whose store memory is not registered with CUDA yet is attended on the
  /// CPU, so bit-identical runs also need Runtime::synchronize between steps (it waits for that).
  bool deterministic = false;
  HostHandoff handoff = HostHandoff::kAuto;  ///< CUDA backend: streams → host side (see HostHandoff)
  /// CUDA backend: FlashD2H's pinned staging, where each call's new K and V rows land before the
  /// CPU scatters them into the store. The calls of every layer take its slots in turn: as many
  /// slots as this many bytes hold at the largest call so far, at least 4 (even past this limit),
  /// at most 2 per layer (a 1-layer model: 2) and never exactly 1 per layer. Staging cycled through beyond the CPU's last-level cache slows the
  /// scatter: the rows no longer arrive in the cache (bench/results/session32, session33). > 0; the
  /// host backend ignores it.
  int64_t staging_limit_bytes = int64_t{64} << 20;

  // --- CPU engine tuning (what hgca-tune writes; load_options_json reads) ---
  int32_t threads_per_node = 0;  ///< worker threads on each NUMA node; 0: every core of the node (`threads` caps the sum)
  int32_t kv_split_tokens = 0;   ///< a CPU task covers at most this many context-set tokens of a head; 0: the engine decides
  /// Most (sequence, KV head) pairs with small context sets the CPU engine packs into one task; 0: as
  /// many as fit in kv_split_tokens. It changes the task count only, never a result.
  int32_t max_packed_heads = 0;
  CpuIsa isa = CpuIsa::kAuto;    ///< the CPU kernels' instruction-set path
  NumaPlacement numa_placement = NumaPlacement::kAuto;  ///< sequences → NUMA nodes

  // --- DRAM store memory ---
  /// The store's memory is taken from the OS per NUMA node in chunks of this many bytes (bound to
  /// the node; on the CUDA backend pinned and registered with the GPU, one registration per chunk)
  /// and kept ahead of need by a background thread. A multiple of 4096, at least 64 KiB. Each slot
  /// size in use holds a chunk of its own and two spare chunks per node are kept ready, so even a
  /// small runtime holds several chunks once it stores anything (the tiny model's run: 6, 192 MiB
  /// at the default): lower it where many small runtimes share a process.
  int64_t store_chunk_bytes = int64_t{32} << 20;
  /// At most this many bytes of store memory over all nodes (at least store_chunk_bytes); 0: no
  /// limit of its own. Either way the store takes no chunk that would leave less than 1/32 of the
  /// memory this process may use (at most 1 GiB) available (MemAvailable, or the cgroup's limit less
  /// its usage; on several NUMA nodes, each node its share too, where the nodes' figures add up to
  /// the machine's memory). A call that needs more fails with
  /// kOutOfMemory and loses no KV entry. On the CUDA backend the host's copy of each window
  /// (window_blocks blocks per layer and sequence) is store memory too; the host backend's windows
  /// are not.
  int64_t store_limit_bytes = 0;
  /// How rows enter the store's blocks (see StoreWrites).
  StoreWrites store_writes = StoreWrites::kAuto;

  // --- the overflow policy (CUDA backend; the host backend ignores these) ---
  OverflowMode overflow = OverflowMode::kAuto;
  /// kAuto moves items only when the predicted critical path drops by at least this fraction, in [0, 1).
  double overflow_margin = 0.1;
  /// The cost model's rates in GB/s, each 0 or at least 0.001 (src/overflow_policy.hpp); 0 keeps
  /// the default, the GPU machine's figures. cpu: the CPU engine over selected K+V (hgca-tune's
  /// measurement, written to its JSON); cpu_row: the CPU engine per query row once compute-bound
  /// (as gpu_row, a figure at G = 4 and 2-byte K/V, scaled to the runtime's G and dtype); h2d: the
  /// GPU reading host memory; gpu, gpu_row: the GPU's sparse attention, as the CPU's; window: the
  /// window's attention over its K+V.
  double overflow_cpu_gbps = 0.0;
  double overflow_cpu_row_gbps = 0.0;
  double overflow_h2d_gbps = 0.0;
  double overflow_gpu_gbps = 0.0;
  double overflow_gpu_row_gbps = 0.0;
  double overflow_window_gbps = 0.0;
};

/// Loads the tuned fields of `*inout` from a JSON file as hgca-tune writes it (--out); the fields the
/// file does not name keep their values. Keys (all optional): "threads", "threads_per_node",
/// "kv_split_tokens", "max_packed_heads" (integers ≥ 0), "isa" ("auto", "portable", "avx2",
/// "avx512", "avx512bf16"), "numa_placement" ("auto", "balanced", "gpu_local"), the overflow
/// policy's "overflow" ("auto", "off", "always"), "overflow_margin" (a number in [0, 1)) and rates
/// "overflow_cpu_gbps", "overflow_cpu_row_gbps", "overflow_h2d_gbps", "overflow_gpu_gbps",
/// "overflow_gpu_row_gbps", "overflow_window_gbps" (0 or numbers ≥ 0.001; hgca-tune writes the first), and
/// "tuned_on" (an object describing the measurement; where its "nodes", "cores" or "isa_auto_is"
/// differ from this machine's, the file loads with a warning on stderr, once). Any other key, a
/// wrong type or an out-of-range value is an error (kInvalidArgument) naming the file, the key, the
/// value and what was expected, and a file that cannot be opened is kNotFound; `*inout` is then
/// left as it was.
/// ("heads_per_task" is refused with a pointer to max_packed_heads: it is the method's padding,
/// not a tuned field, and files of earlier hgca-tune versions used that name for the packing.) Whether this CPU has the `isa` named is checked by Runtime::create.
///
/// Runtime::create applies the file named by the environment variable HGCA_CONFIG (when set and not
/// empty) the same way, over the Options it is given: precedence is defaults < fields set in code
/// (or loaded with this function) < HGCA_CONFIG. An error in that file fails create with a message
/// naming HGCA_CONFIG.
Status load_options_json(const std::string& path, Options* inout);

/// A contiguous row-major tensor of rank 3 given by pointer, dtype and shape.
struct TensorView {
  const void* data = nullptr;
  DType dtype = DType::kBFloat16;
  std::array<int64_t, 3> shape{0, 0, 0};
};
struct MutableTensorView {
  void* data = nullptr;
  DType dtype = DType::kBFloat16;
  std::array<int64_t, 3> shape{0, 0, 0};
};

using SeqId = uint64_t;

/// Per-layer statistics, summed over the live sequences.
struct LayerStats {
  int64_t sequences = 0;
  int64_t window_tokens = 0;    ///< tokens held in the window rings
  int64_t window_capacity = 0;  ///< sequences × W
  int64_t store_tokens = 0;     ///< tokens evicted to the DRAM store (per KV head, so not × Hkv)
  std::vector<int64_t> context_tokens;  ///< per KV head: size of the context set S (after padding)
  double selected_fraction = 0.0;  ///< Σ|S| / (Hkv × store_tokens); 0 when the store is empty
  int64_t reevaluations = 0;       ///< re-evaluations published so far
  /// Seconds the CUDA backend's streams were held moving this layer's KV out of the window
  /// (device-to-host copies, and the store update where a stream waits for it), timed with CUDA
  /// events; calls captured into a graph are not timed. 0 on the host backend, where eviction is
  /// part of the CPU's work.
  double transfer_seconds = 0.0;
  /// The overflow policy's decisions (CUDA backend; 0 on the host backend): calls of this layer
  /// that attended any context set on the GPU, and the (sequence, KV head) items, K+V bytes and
  /// query rows they moved, summed over the calls.
  int64_t overflow_calls = 0;
  int64_t overflow_items = 0;
  int64_t overflow_bytes = 0;
  int64_t overflow_rows = 0;
  /// The cost model's prediction for the layer's last call, as planned: the CPU's part and the
  /// GPU's part in seconds (0 with the policy off).
  double overflow_predicted_cpu_seconds = 0.0;
  double overflow_predicted_gpu_seconds = 0.0;
};

/// One NUMA node of the runtime's CPU pool.
struct NumaNodeStats {
  int32_t threads = 0;     ///< worker threads of the node's arena (0: it runs nothing)
  bool gpu_local = false;  ///< near the runtime's GPU (hwloc's PCI locality): placement prefers it
  int64_t sequences = 0;   ///< live sequences assigned to it
};

/// The CPU side as the runtime set it up from its options (HGCA_CONFIG included).
struct CpuStats {
  CpuIsa isa = CpuIsa::kAuto;    ///< the sparse kernels' path: Options::isa, auto resolved to what runs
  int32_t kv_split_tokens = 0;   ///< the engine's split size (0: it sizes splits per step)
  int32_t max_packed_heads = 0;  ///< the engine's packing (0: as many as fit in a split)
  bool numa_bound = false;       ///< each arena's threads are confined to its node
  std::vector<NumaNodeStats> nodes;  ///< every NUMA node, in hwloc's logical order
};

/// The DRAM store's memory on one NUMA node (Options::store_chunk_bytes).
struct StoreMemoryStats {
  int32_t node = 0;
  int64_t chunks = 0;                 ///< chunks held, spare ones included
  int64_t registered_chunks = 0;      ///< of which registered with the GPU (CUDA backend)
  int64_t bound_chunks = 0;           ///< of which bound to the node by hwloc
  int64_t reserved_bytes = 0;         ///< bytes of the chunks held
  int64_t used_bytes = 0;             ///< bytes handed out to store blocks, context caches (and window copies)
  int64_t sync_growths = 0;           ///< chunks an allocation took from the OS itself (none was spare)
  int64_t background_growths = 0;     ///< chunks added ahead of need by the background thread
  int64_t released_chunks = 0;        ///< chunks given back to the OS
  int64_t registration_failures = 0;  ///< chunks the GPU refused to register (the node then grows no more)
};

/// One runtime serves one caller at a time: its calls must not overlap (make them from one thread, or
/// under the caller's own lock); separate runtimes are independent.
class Runtime {
 public:
  /// Validates `options` and builds a runtime.
  static Status create(const Options& options, std::unique_ptr<Runtime>* out);
  virtual ~Runtime() = default;

  virtual const Options& options() const = 0;
  /// The backend this runtime runs on (kAuto resolved to what the build and machine offer).
  virtual Backend backend() const = 0;
  /// How the CUDA backend's streams hand work to the host side (Options::handoff's kAuto resolved
  /// to kPoll or kCallback); kAuto on the host backend, which has no streams.
  virtual HostHandoff handoff() const = 0;

  /// Sequences are added and released at step boundaries (not between begin_step and end_step).
  virtual Status add_sequence(SeqId id) = 0;
  /// Frees the sequence's window, store and context sets.
  virtual Status release_sequence(SeqId id) = 0;

  /// Begins a step: the batch's sequences (distinct, added) and their new-token counts (≥ 1).
  /// Tokens of batch entry i are rows [offset_i, offset_i + n_new[i]) of every tensor of the step.
  /// It takes the DRAM store memory that every layer's call will need for the entries leaving the
  /// window, so that memory running out for them fails here (kOutOfMemory, nothing changed: release
  /// sequences or raise store_limit_bytes, and begin the step again), never half-way through a step;
  /// no entry is ever lost. The room to select them into context sets (and re-evaluations' new
  /// sets) is taken during the step: running out of that leaves entries unselected until it is
  /// reported (attention()'s errors), so attention is sparser than beta asks meanwhile.
  virtual Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) = 0;

  /// One attention call for `layer` (each layer exactly once per step, any order).
  /// q [T, Hq, D], k and v [T, Hkv, D], out [T, Hq, D], with T the step's total new tokens; out
  /// and lse_out must not share memory with q, k, v or each other (q, k and v are still read after
  /// out and lse_out are written: kInvalidArgument).
  /// The new queries attend causally to the sequence's whole history: exactly over the window and
  /// the new tokens, sparsely over the selected store. `lse_out` [T, Hq] (optional) receives the
  /// natural-log LSE of the scaled scores over everything attended. q, k and v must be finite:
  /// they are not checked (on the CUDA backend they are device memory), and a NaN or infinity gives
  /// unspecified outputs, for as long as a K or V row holding one stays in the sequence; in q, k or
  /// v, the weights it gives may also change which store entries are selected from then on.
  ///
  /// Host backend: host pointers; the call returns when out is written; `stream` is ignored.
  /// CUDA backend: q, k, v, out and lse_out are device (or managed) memory, q, k, v and out
  /// 16-byte aligned (lse_out 4-byte; as cudaMalloc gives: kInvalidArgument otherwise), and
  /// `stream` is the caller's cudaStream_t (nullptr: the legacy default stream). The call enqueues
  /// the work on `stream` and returns without waiting; out is ready when the stream gets there. The CPU's part
  /// starts when the stream has produced q and joins through the stream, so the calls of a step can
  /// be captured into a CUDA graph, which performs that step when launched; launch it exactly once
  /// (the runtime reuses what the captured calls hold once that launch has run). Calls reuse
  /// the runtime's buffers: the streams of successive calls must be ordered (e.g. one stream).
  /// Errors: a call that fails has changed nothing and may be made again, but for a CUDA error
  /// after part of it was enqueued (the device or the stream failing), after which every call
  /// reports kInternal. An error left pending on the calling thread by earlier CUDA work is
  /// reported before anything is enqueued. Memory running out where a call goes on without it
  /// (room to select the entries it moves into the store, which then join it unselected until a
  /// re-evaluation or min_keep takes them, or a re-evaluation's new context sets, which are then
  /// dropped) is reported once, kOutOfMemory, by the next call that waits for the host side
  /// (attention, synchronize, release_sequence, read_kv, layer_stats, store_memory_stats); the call
  /// that reports it did nothing else and may be made again (release sequences or raise the limit
  /// once the step has ended, and go on).
  /// Anything else that failed in the host side of an earlier call (CUDA backend) is reported by
  /// every call from then on.
  virtual Status attention(int32_t layer, const TensorView& q, const TensorView& k,
                           const TensorView& v, const MutableTensorView& out,
                           float* lse_out = nullptr, void* stream = nullptr) = 0;

  /// Ends the step; fails if some layer was not attended.
  virtual Status end_step() = 0;
  /// Abandons the open step before its first attention call (e.g. after begin_step was given a
  /// wrong n_new): the runtime is as it was before begin_step. Once a layer has been attended its
  /// rows are in, and the step must be completed (kFailedPrecondition).
  virtual Status abort_step() = 0;

  /// Statistics of `layer` over the live sequences (reflects published re-evaluations). During a step,
  /// a layer already attended in it shows the step's rows, the others not yet.
  virtual Status layer_stats(int32_t layer, LayerStats* out) const = 0;

  /// The DRAM store's memory, one entry per NUMA node.
  virtual Status store_memory_stats(std::vector<StoreMemoryStats>* out) const = 0;

  /// Tokens of `id`'s history (the same for every layer at a step boundary; during a step, the
  /// length before it).
  virtual Status sequence_length(SeqId id, int64_t* out) const = 0;

  /// The CPU pool (threads per NUMA node, sequences on each) and the engine configuration in use.
  virtual Status cpu_stats(CpuStats* out) const = 0;
  /// The NUMA node `id` was assigned when added (Options::numa_placement): its CPU work runs in that
  /// node's arena, and its DRAM store belongs there. A sequence keeps its node until released.
  virtual Status sequence_node(SeqId id, int32_t* out) const = 0;

  /// Copies `id`'s whole history at `layer` from window ∪ store into k_out, v_out
  /// [length, Hkv, D] in options().dtype (sequence_length() × Hkv × D elements each), in token
  /// order (the layout attention() took them in). Between steps only (kFailedPrecondition while a
  /// step is open). k_out and v_out must not be null, even for a history of length 0.
  virtual Status read_kv(int32_t layer, SeqId id, void* k_out, void* v_out) const = 0;

  /// Waits for all enqueued work (CUDA backend) and for asynchronous re-evaluations, and publishes
  /// them. layer_stats and read_kv wait for enqueued work themselves (sequence_length needs none). Calls
  /// captured into a CUDA graph are the caller's to wait for: synchronize the stream the graph was
  /// launched on first (the runtime does not see the launch).
  virtual Status synchronize() = 0;
};

}  // namespace hgca
