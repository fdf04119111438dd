// Store memory: where the DRAM store's blocks and context caches live. Taken from the OS in large
// chunks per NUMA node (bound to the node with hwloc, registered with the GPU once per chunk, never
// in one huge registration) and carved into fixed-size slots with free lists; a background thread
// keeps spare chunks ready, so that a step only pops a free list.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hgca/hgca.hpp"
#include "kvmgr/machine_memory.hpp"

namespace hgca::cpu {
class Topology;
}

namespace hgca::kvmgr {

/// What makes a chunk readable by a device: the CUDA backend registers it with cudaHostRegister
/// (mapped, portable), so the GPU reads store memory through unified addressing. Both functions are
/// called on the store memory's own thread (never on the caller's: a CUDA host function may
/// allocate, and must not call CUDA), once per chunk, with the chunk's range; `unregister_chunk`
/// also when the store memory is destroyed. Empty: chunks stay plain node-bound memory (host backend).
struct ChunkRegistration {
  std::function<Status(void* base, std::size_t bytes)> register_chunk;
  std::function<void(void* base, std::size_t bytes)> unregister_chunk;
};

struct StoreMemoryOptions {
  /// Bytes per chunk (a multiple of 4096, ≥ 64 KiB). Spans over half a chunk get a chunk of their own.
  std::size_t chunk_bytes = std::size_t{32} << 20;
  /// Spare chunks per node below which the background thread adds one (0: no background growth).
  int32_t low_water_chunks = 2;
  /// Spare chunks per node above which the background thread releases them (≥ low_water_chunks + 1).
  int32_t high_water_chunks = 6;
  /// At most this many bytes of chunks over all nodes (0: no limit). No one request may pass it, nor
  /// the memory this process may use (the machine's, or its cgroup's limit).
  std::size_t limit_bytes = 0;
  /// How rows enter store blocks (StoreMemory::streams_rows).
  StoreWrites writes = StoreWrites::kAuto;
  /// kAuto streams once more than this many bytes are in use over all nodes; 0: the machine's
  /// last-level cache (kDefaultCacheBytes where the topology does not know it).
  std::size_t stream_above_bytes = 0;
  /// Bytes of one half (K or V) of a context cache's first segment (ContextCache): 16 KiB (64 rows
  /// at D 128 in bf16). It doubles up to this size, copying its rows each time, and no row moves
  /// past it: at 128 KiB the copies cost FlashD2H into the stores 4-8 %
  /// (bench/results/session27-final). Tests take a few rows, so that short caches already span
  /// several segments.
  std::size_t context_first_segment_bytes = std::size_t{16} << 10;
  ChunkRegistration registration;
  /// No chunk is taken that would leave less memory available than this (0: 1/32 of the memory
  /// this process may use, at most 1 GiB): the process's other allocations need room too.
  std::size_t keep_free_bytes = 0;
  /// The bytes the machine can still give this process, asked before each chunk (unset:
  /// /proc/meminfo's MemAvailable and the cgroup's limit less its usage). Tests set it.
  std::function<std::size_t()> available_memory;
  /// The same for one node (by index), asked where chunks are bound to one of several nodes
  /// (unset: the node's free memory and inactive page cache). Tests set it.
  std::function<std::size_t(int node)> node_available_memory;
};

/// Whether StoreMemory takes chunks of `bytes` (Options::store_chunk_bytes): a multiple of 4096,
/// at least 64 KiB; the error names the option.
Status check_chunk_bytes(int64_t bytes);

/// Store memory ran out: the byte limit, the OS or the device refused a chunk. A bad_alloc, so that
/// every caller's handling of exhausted memory applies; what() says which limit and how to lift it.
class StoreMemoryExhausted : public std::bad_alloc {
 public:
  explicit StoreMemoryExhausted(std::string message)
      : message_(std::make_shared<const std::string>(std::move(message))) {}
  const char* what() const noexcept override { return message_->c_str(); }

 private:
  std::shared_ptr<const std::string> message_;  // shared: copying an exception must not throw
};

class StoreMemory;
struct StoreChunk;  // store_memory.cpp

/// One slot of store memory, returned to its chunk's free list when destroyed. Move-only.
class StoreSpan {
 public:
  StoreSpan() = default;
  StoreSpan(StoreSpan&& other) noexcept { *this = std::move(other); }
  StoreSpan& operator=(StoreSpan&& other) noexcept;
  ~StoreSpan() { reset(); }

  std::byte* data() const { return data_; }
  /// The slot's bytes (the request rounded up to StoreMemory::kAlignment; a whole chunk for a large one).
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return data_ != nullptr; }
  /// Whether the device can read it through its host address (its chunk is registered).
  bool device_readable() const;
  void reset() noexcept;

 private:
  friend class StoreMemory;
  std::shared_ptr<StoreMemory> owner_;  // keeps the chunks alive while a span is
  StoreChunk* chunk_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  uint32_t slot_ = 0;
};

/// The allocator of store memory over the nodes of one topology. Thread-safe.
///
/// Each chunk serves one slot size at a time (the store's block size, or the size of a context
/// cache's segment); a chunk whose slots are all free again becomes spare and serves any size next.
/// When a node's spare chunks fall below the low-water mark, the background thread allocates (and
/// registers) the next one; an allocation that finds no spare chunk allocates one itself (a
/// synchronous growth, counted; its registration follows on the background thread). Spare chunks
/// above the high-water mark, and freed chunks of large spans, are released by the background
/// thread. Chunks of a node whose registration failed once are not grown any more.
class StoreMemory : public std::enable_shared_from_this<StoreMemory> {
 public:
  /// Slot sizes are multiples of this (what GPU loads and AVX-512 rows like).
  static constexpr std::size_t kAlignment = 256;

  static Status create(std::shared_ptr<const cpu::Topology> topology, StoreMemoryOptions options,
                       std::shared_ptr<StoreMemory>* out);
  /// Whether the NUMA nodes' own figures (sysfs nodeN/meminfo) may bound chunks: all the nodes'
  /// memory, `nodes_total_bytes`, adds up to at least 90 % of the machine's `machine_bytes`. Some
  /// virtual machines report far less per node (4.8 of 126 GiB on the GPU machine's one node),
  /// which would refuse chunks the machine has.
  static bool node_figures_hold(std::size_t nodes_total_bytes, std::size_t machine_bytes);
  ~StoreMemory();
  StoreMemory(const StoreMemory&) = delete;
  StoreMemory& operator=(const StoreMemory&) = delete;

  int node_count() const { return static_cast<int>(nodes_.size()); }
  const StoreMemoryOptions& options() const { return opt_; }
  const cpu::Topology& topology() const { return *topology_; }

  /// A span of at least `bytes` on `node`. Throws StoreMemoryExhausted when the memory cannot be
  /// had (nothing changed then), std::out_of_range for a node outside the topology.
  StoreSpan allocate(int node, std::size_t bytes);
  /// out.size() spans of at least `bytes` on `node` under one lock (out's spans empty). Throws as
  /// allocate, with every span of `out` left empty.
  void allocate(int node, std::size_t bytes, std::span<StoreSpan> out);
  /// Throws as allocate(node, bytes, out) would where `count` spans of `bytes`, with `bookkeeping`
  /// bytes of the caller's own per span, are more than the store may ever hold: a caller checks
  /// before it makes the lists that would hold them.
  void check_request(int node, std::size_t bytes, std::size_t count, std::size_t bookkeeping = 0) const;

  /// Starts the background growth of `node` if its spare chunks are below the low-water mark (a
  /// sequence joining the node calls it, so that its first steps find memory ready).
  void prepare(int node);

  /// Waits until the background thread has nothing left to do.
  void wait_idle();

  StoreMemoryStats stats(int node) const;

  /// Whether bulk rows are to be written into store blocks with non-temporal stores now (options'
  /// `writes`; kAuto: when the bytes in use exceed what the last-level cache could keep). Lock-free.
  bool streams_rows() const {
    return opt_.writes == StoreWrites::kStreamed ||
           (opt_.writes == StoreWrites::kAuto && used_total_.load(std::memory_order_relaxed) > stream_above_);
  }
  /// kAuto's threshold in bytes.
  int64_t stream_above_bytes() const { return stream_above_; }
  /// kAuto's threshold when the topology does not know its last-level cache.
  static constexpr std::size_t kDefaultCacheBytes = std::size_t{32} << 20;

  /// What the allocator recorded of one chunk (for tests and diagnostics).
  struct ChunkInfo {
    const std::byte* base = nullptr;
    std::size_t bytes = 0;
    int node = 0;
    bool bound = false;       ///< hwloc bound it to `node` (false: pages placed by first touch)
    bool registered = false;  ///< the registration hook accepted it
    std::size_t slot_bytes = 0;  ///< the slot size it serves now (0: spare)
  };
  std::vector<ChunkInfo> chunks() const;

 private:
  struct Node;
  friend class StoreSpan;

  StoreMemory(std::shared_ptr<const cpu::Topology> topology, StoreMemoryOptions options);
  Node& node(int index) const;
  StoreSpan allocate_large(int node, std::size_t bytes);
  /// Allocates (and, from the background thread, registers) a chunk; throws StoreMemoryExhausted.
  std::unique_ptr<StoreChunk> new_chunk(int node, std::size_t bytes, bool background);
  /// Takes a chunk into the node's bookkeeping, spare or not (lock held); may throw bad_alloc.
  void adopt(Node& n, std::unique_ptr<StoreChunk>& chunk, bool spare);
  /// adopt(), or on failure the chunk's memory freed and the exception rethrown, `lock` (on mutex_)
  /// held again.
  void adopt_or_free(Node& n, std::unique_ptr<StoreChunk>& chunk, bool spare, std::unique_lock<std::mutex>& lock);
  /// A chunk grown by an allocating thread (lock held): counted, and handed to the thread that registers.
  void note_sync_growth(Node& n);
  void free_chunk_memory(StoreChunk& chunk) noexcept;
  void release(StoreChunk* chunk, uint32_t slot) noexcept;
  void request_growth(Node& n);  // lock held
  bool has_work() const;         // lock held
  void run_background();

  std::shared_ptr<const cpu::Topology> topology_;
  const StoreMemoryOptions opt_;
  mutable std::mutex mutex_;
  std::condition_variable work_cv_;  // the background thread waits for work
  std::condition_variable idle_cv_;  // wait_idle waits for the background thread
  std::vector<std::unique_ptr<Node>> nodes_;
  std::size_t reserved_total_ = 0;  // bytes of chunks over all nodes, for limit_bytes
  MachineMemory machine_memory_;
  std::atomic<std::size_t> unpopulated_bytes_{0};  // of chunks checked against it, pages not yet in
  std::size_t keep_free_bytes_ = 0;  // StoreMemoryOptions::keep_free_bytes, resolved (shared by the nodes)
  bool check_nodes_ = false;         // chunks are bound to one of several nodes: each node's memory is asked too
  std::size_t usable_bytes_ = 0;   // the memory this process may use (0: unknown): no request may pass it
  std::atomic<int64_t> used_total_{0};  // stats' used_bytes over all nodes, read without the lock
  int64_t stream_above_ = 0;
  bool stop_ = false;
  bool busy_ = false;
  std::thread background_;
};

}  // namespace hgca::kvmgr
