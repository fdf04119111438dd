// The NUMA-aware CPU pool: the machine's topology read through hwloc, one oneTBB task_arena per NUMA
// node (threads confined to the node), and node-bound memory for the DRAM store and context caches.
#pragma once

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hgca/hgca.hpp"

struct hwloc_topology;  // hwloc's handle type, kept out of this header

namespace hgca::cpu {

/// One NUMA node; nodes are numbered by hwloc's logical index (what oneTBB's numa ids also use).
struct NumaNode {
  int index = 0;          ///< position in Topology::nodes()
  int os_index = 0;       ///< the OS's number for it (numactl, /sys/devices/system/node/nodeN)
  int cores = 0;          ///< cores whose PUs are local to the node (0: a memory-only node)
  int hw_threads = 0;     ///< PUs (hardware threads) local to the node
  uint64_t memory_bytes = 0;
  std::string cpus;       ///< the node's PUs, as an OS index list ("0-15,32-47")
};

/// An NVIDIA GPU seen as a PCI device, and the NUMA nodes it is attached to.
struct GpuDevice {
  std::string pci_bus_id;          ///< "0000:65:00.0"
  std::string os_names;            ///< its OS devices where hwloc saw any ("cuda0 nvml0 card1"), else empty
  std::vector<int> local_nodes;    ///< node indices; every node when it hangs off the whole machine
};

/// A loaded hwloc topology: the real machine, or one described by an XML file or a synthetic string
/// (to test placement on machines we do not have). Immutable after loading; shareable.
class Topology {
 public:
  /// The machine this process runs on (restricted to the CPUs and nodes it may use).
  static Status from_machine(std::shared_ptr<const Topology>* out);
  /// An XML topology as `lstopo file.xml` writes it (PCI devices in it are kept).
  static Status from_xml(const std::string& path, std::shared_ptr<const Topology>* out);
  /// hwloc's synthetic description, e.g. "pack:2 numa:1 core:8 pu:2". `as_this_system` makes it
  /// claim to be this machine (HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM), so that tests reach the binding
  /// paths; binding to CPUs or nodes the machine lacks then fails and falls back as it would here.
  static Status from_synthetic(const std::string& description, std::shared_ptr<const Topology>* out,
                               bool as_this_system = false);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  /// Whether this describes the machine we run on (only then do thread and memory binding apply).
  bool is_this_system() const { return this_system_; }
  /// "machine", "xml:PATH" or "synthetic:DESCRIPTION".
  const std::string& source() const { return source_; }
  const std::vector<NumaNode>& nodes() const { return nodes_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int total_cores() const;
  /// Bytes of last-level cache over the whole machine (sum over its instances; 0 when unknown):
  /// what a bandwidth measurement's working set must dwarf.
  uint64_t last_level_cache_bytes() const { return llc_bytes_; }
  /// NVIDIA GPUs (PCI vendor 0x10de, display or 3D controller class) hwloc found.
  const std::vector<GpuDevice>& gpus() const { return gpus_; }

  /// Nodes local to the PCI device `bus_id` ("0000:65:00.0", "00000000:65:00.0" as
  /// cudaDeviceGetPCIBusId and nvidia-smi write it, or "65:00.0").
  Status nodes_near_pci(const std::string& bus_id, std::vector<int>* out) const;
  /// Nodes whose CPUs intersect `cpu_list` ("0-15,32-47", as sysfs's local_cpulist of a GPU).
  Status nodes_near_cpus(const std::string& cpu_list, std::vector<int>* out) const;

  /// Whether memory can be bound to a node here (this system and the OS supports it).
  bool memory_binding_supported() const;

  /// A few lines for people: nodes, cores, memory, GPUs and their nodes.
  std::string describe() const;

  hwloc_topology* handle() const { return topo_; }

 private:
  Topology() = default;
  static Status load(std::string source, const std::string& what, bool machine, bool as_this_system,
                     std::shared_ptr<const Topology>* out);

  hwloc_topology* topo_ = nullptr;
  bool this_system_ = false;
  std::string source_;
  std::vector<NumaNode> nodes_;
  std::vector<GpuDevice> gpus_;
  uint64_t llc_bytes_ = 0;
};

/// Page-granular memory bound to `node` of `topology` (hwloc_set_area_membind on fresh anonymous
/// pages, 2 MiB-aligned from 2 MiB up so that transparent huge pages can back all of it). Where
/// binding is unsupported (not this system, or the OS refuses), plain pages placed by first touch;
/// the first such fallback is reported once on stderr. `*bound` (optional) tells which happened.
/// Returns nullptr when memory is exhausted. Freed by node_free with the same `bytes`.
void* node_alloc(const Topology& topology, int node, std::size_t bytes, bool* bound = nullptr);
void node_free(void* p, std::size_t bytes) noexcept;
/// The node [p, p + bytes) is bound to, -1 when it is not bound to exactly one node or binding
/// cannot be queried here.
int node_of_memory(const Topology& topology, const void* p, std::size_t bytes);

/// A std allocator placing its memory on one node, so that std::vector can hold a node's store:
/// `std::vector<float, NodeAllocator<float>> v(n, NodeAllocator<float>(topo, node));`
/// Allocations are whole pages: meant for large, long-lived buffers.
template <typename T>
class NodeAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  NodeAllocator(std::shared_ptr<const Topology> topology, int node) noexcept
      : topology_(std::move(topology)), node_(node) {}
  template <typename U>
  NodeAllocator(const NodeAllocator<U>& other) noexcept : topology_(other.topology()), node_(other.node()) {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = node_alloc(*topology_, node_, n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { node_free(p, n * sizeof(T)); }

  const std::shared_ptr<const Topology>& topology() const { return topology_; }
  int node() const { return node_; }

  template <typename U>
  bool operator==(const NodeAllocator<U>& other) const {
    return topology_ == other.topology() && node_ == other.node();
  }

 private:
  std::shared_ptr<const Topology> topology_;
  int node_;
};

/// Prints `message` on stderr the first time this process sees it (diagnostics of the machine,
/// which every runtime on it would otherwise repeat).
void warn_once(const std::string& message);

/// Runs body(a) inside *arenas[a] for every a in `which`, all at once, and returns when all are
/// done; the calling thread helps in each arena in turn while it waits. Rethrows the first
/// exception a body threw, after every arena has finished.
template <typename F>
void run_in_arenas(std::span<tbb::task_arena* const> arenas, std::span<const int> which, F&& body) {
  if (which.size() == 1) {  // no task to hand over
    arenas[static_cast<std::size_t>(which[0])]->execute([&] { body(which[0]); });
    return;
  }
  // Enqueued from outside (not spawned by the caller inside each arena): the arena asks for its
  // workers at once, also an arena of one slot, which the caller's spawn left to the caller's turn.
  std::vector<tbb::task_group> groups(which.size());
  for (std::size_t k = 0; k < which.size(); ++k) {
    arenas[static_cast<std::size_t>(which[k])]->enqueue(groups[k].defer([&, k] { body(which[k]); }));
  }
  std::exception_ptr failure;
  for (std::size_t k = 0; k < which.size(); ++k) {
    arenas[static_cast<std::size_t>(which[k])]->execute([&, k] {
      try {
        groups[k].wait();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    });
  }
  if (failure) std::rethrow_exception(failure);
}

struct PoolOptions {
  int threads = 0;           ///< total worker threads over all nodes; 0: every core
  int threads_per_node = 0;  ///< threads on each node; 0: every core of the node
  /// Nodes that win ties when `threads` is shared among the nodes (the GPU's: with fewer threads
  /// than nodes of equal cores, its node gets one).
  std::vector<int> preferred_nodes;
  /// What oneTBB reports as its NUMA nodes; unset: tbb::info::numa_nodes(). Tests set it to play a
  /// oneTBB whose hwloc binding did not load ({-1}).
  std::optional<std::vector<int>> tbb_numa_nodes;
  bool warn_on_stderr = true;  ///< print each diagnostic once per process (they are kept regardless)
};

/// One oneTBB task_arena per NUMA node that has threads. On this machine, with oneTBB's hwloc
/// binding loaded, each arena is constrained to its node by oneTBB; without that binding (oneTBB
/// sees one node while hwloc sees several), hgca warns and binds the arena's workers itself through
/// hwloc. Topologies that are not this machine's (XML, synthetic) get unbound arenas of the same
/// sizes, so that the pool's decisions can be exercised anywhere.
class Pool {
 public:
  static Status create(std::shared_ptr<const Topology> topology, const PoolOptions& options,
                       std::unique_ptr<Pool>* out);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const Topology& topology() const { return *topology_; }
  const std::shared_ptr<const Topology>& shared_topology() const { return topology_; }
  int node_count() const { return topology_->node_count(); }
  /// Worker threads of each node (0 for a node without an arena); feed these to choose_node.
  const std::vector<int>& threads_per_node() const { return threads_; }
  int threads(int node) const { return threads_[static_cast<std::size_t>(node)]; }
  int total_threads() const;
  /// Whether the arenas are confined to their nodes (by oneTBB or by hgca's own hwloc binding);
  /// false from the first worker hgca's binding failed on (a warning names its node).
  bool numa_bound() const;
  /// Warnings and notes from creation (binding missing, topology not this machine's, ...).
  const std::vector<std::string>& diagnostics() const { return diagnostics_; }

  /// Runs f() inside `node`'s arena (its parallel algorithms use that node's threads) and returns
  /// what f returns. A node without threads runs on the first node that has some.
  template <typename F>
  auto execute(int node, F&& f) -> decltype(f()) {
    return arena(node).execute(std::forward<F>(f));
  }
  tbb::task_arena& arena(int node);
  /// arena(node) of every node, in node order: what SparseEngine::attend and run_in_arenas take.
  const std::vector<tbb::task_arena*>& arenas() const { return arena_of_node_; }
  /// `node`'s low-priority arena (threads / 2 − 1 workers, at least one, the same binding): for
  /// background work such as re-evaluations, so that a step's work in arena(node) keeps cores and
  /// gets the others as soon as their current background task ends, instead of queueing behind
  /// all of them. Its tasks run without a caller waiting in it.
  tbb::task_arena& background(int node);

 private:
  class NodeBinder;
  Pool() = default;

  std::shared_ptr<const Topology> topology_;
  std::vector<int> threads_;
  bool bound_ = false;
  std::vector<std::string> diagnostics_;
  std::vector<std::unique_ptr<tbb::task_arena>> arenas_;  // per node; null without threads
  std::vector<std::unique_ptr<tbb::task_arena>> background_;  // per node, low priority; null likewise
  std::vector<tbb::task_arena*> arena_of_node_;            // per node: arena(node)
  std::vector<std::unique_ptr<NodeBinder>> binders_;      // destroyed before the arenas
};

}  // namespace hgca::cpu
