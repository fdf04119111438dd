// The NUMA-aware CPU pool over hwloc and oneTBB (see pool.hpp).
#include "cpu/pool.hpp"

#include <hwloc.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <tuple>

#include "cpu/placement.hpp"
#include "status_error.hpp"

namespace hgca::cpu {
namespace {

std::string cpu_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return {};
  std::string s(text);
  std::free(text);
  return s;
}

struct Bitmap {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  ~Bitmap() { hwloc_bitmap_free(set); }
  Bitmap() = default;
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
};

std::vector<int> nodes_intersecting(const std::vector<NumaNode>& nodes, hwloc_topology_t topo,
                                    hwloc_const_nodeset_t nodeset) {
  std::vector<int> out;
  for (const NumaNode& n : nodes) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n.index));
    if (obj && hwloc_bitmap_intersects(obj->nodeset, nodeset)) out.push_back(n.index);
  }
  return out;
}

}  // namespace

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  const std::lock_guard lock(mutex);
  if (seen.insert(message).second) fmt::print(stderr, "{}\n", message);
}

// ---- Topology ----

Topology::~Topology() {
  if (topo_) hwloc_topology_destroy(topo_);
}

Status Topology::from_machine(std::shared_ptr<const Topology>* out) {
  return load("machine", "", true, false, out);
}
Status Topology::from_xml(const std::string& path, std::shared_ptr<const Topology>* out) {
  return load("xml:" + path, path, false, false, out);
}
Status Topology::from_synthetic(const std::string& description, std::shared_ptr<const Topology>* out,
                                bool as_this_system) {
  return load("synthetic:" + description, description, false, as_this_system, out);
}

Status Topology::load(std::string source, const std::string& what, bool machine, bool as_this_system,
                      std::shared_ptr<const Topology>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "Topology: out is null");
  std::shared_ptr<Topology> t(new Topology());
  t->source_ = std::move(source);
  if (hwloc_topology_init(&t->topo_) != 0) {
    t->topo_ = nullptr;
    return error(StatusCode::kInternal, "hwloc_topology_init failed: {}", std::strerror(errno));
  }
  // GPUs are PCI devices: keep the important ones (GPUs, NICs) on the machine, all from a file.
  hwloc_topology_set_io_types_filter(t->topo_, machine ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
                                                       : HWLOC_TYPE_FILTER_KEEP_ALL);
  // Without the OpenCL and GL plugins: to name a GPU's OS devices they start those libraries in
  // our process (OpenCL started pocl on the GPU machine, whose LLVM took SIGINT's handler: a Ctrl-C
  // of hgca-decode left its bar's line open; GL asks the X server). CUDA and NVML name it.
#if HWLOC_API_VERSION >= 0x00020100  // hwloc 2.1
  hwloc_topology_set_components(t->topo_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
  hwloc_topology_set_components(t->topo_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
#endif
  // The machine as this process may use it: CPUs outside its binding (taskset, numactl) are not
  // counted, and a node left without any gets no threads (it stays a memory node).
  if (as_this_system || machine) {
    unsigned long flags = HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM;
    if (machine) flags |= HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING;
    hwloc_topology_set_flags(t->topo_, flags);
  }
  if (t->source_.starts_with("xml:")) {
    if (hwloc_topology_set_xml(t->topo_, what.c_str()) != 0) {
      return error(StatusCode::kInvalidArgument, "topology xml = \"{}\": hwloc cannot read it ({})", what,
                   std::strerror(errno));
    }
  } else if (t->source_.starts_with("synthetic:")) {
    if (hwloc_topology_set_synthetic(t->topo_, what.c_str()) != 0) {
      return error(StatusCode::kInvalidArgument,
                   "topology synthetic = \"{}\", expected an hwloc synthetic description such as "
                   "\"pack:2 numa:1 core:4 pu:1\"",
                   what);
    }
  }
  if (hwloc_topology_load(t->topo_) != 0) {
    return error(StatusCode::kInvalidArgument, "topology {}: hwloc cannot load it ({})", t->source_,
                 std::strerror(errno));
  }
  t->this_system_ = hwloc_topology_is_thissystem(t->topo_) != 0;

  // Each PU counts for one node only. A memory node's cpuset is its parent's (hwloc 2), so a
  // package with DDR and HBM, or with a CXL memory node, showed its cores under two nodes: two
  // arenas on the same cores. DRAM nodes claim their CPUs first, in order; a node of another kind
  // (HBM, MCDRAM, NVM, CXL-DRAM, ...) gets only CPUs no other node has: usually none (a memory-only
  // node).
  const int n_nodes = hwloc_get_nbobjs_by_type(t->topo_, HWLOC_OBJ_NUMANODE);
  std::vector<hwloc_obj_t> objs;
  for (int i = 0; i < n_nodes; ++i) {
    objs.push_back(hwloc_get_obj_by_type(t->topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i)));
  }
  std::vector<int> claim_order(static_cast<std::size_t>(n_nodes));
  std::iota(claim_order.begin(), claim_order.end(), 0);
  // hwloc 2.10 names DRAM "DRAM" where a machine has other kinds too.
  auto dram = [&](int i) { return objs[i]->subtype == nullptr || std::strcmp(objs[i]->subtype, "DRAM") == 0; };
  std::sort(claim_order.begin(), claim_order.end(), [&](int a, int b) { return dram(a) != dram(b) ? dram(a) : a < b; });
  std::vector<Bitmap> owned(static_cast<std::size_t>(n_nodes));
  Bitmap claimed;
  for (const int i : claim_order) {
    hwloc_bitmap_andnot(owned[i].set, objs[i]->cpuset, claimed.set);
    hwloc_bitmap_or(claimed.set, claimed.set, owned[i].set);
  }
  for (int i = 0; i < n_nodes; ++i) {
    hwloc_obj_t obj = objs[i];
    const hwloc_const_cpuset_t cpus = owned[i].set;
    NumaNode n;
    n.index = i;
    n.os_index = static_cast<int>(obj->os_index);
    n.cores = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo_, cpus, HWLOC_OBJ_CORE);
    n.hw_threads = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo_, cpus, HWLOC_OBJ_PU);
    if (n.cores <= 0) n.cores = n.hw_threads;  // some topologies carry no Core level
    n.memory_bytes = obj->attr ? obj->attr->numanode.local_memory : 0;
    n.cpus = cpu_list(cpus);
    t->nodes_.push_back(std::move(n));
  }
  if (t->nodes_.empty()) {
    return error(StatusCode::kInvalidArgument, "topology {}: hwloc found no NUMA node", t->source_);
  }

  for (hwloc_obj_type_t level : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    const int count = hwloc_get_nbobjs_by_type(t->topo_, level);
    for (int i = 0; i < count; ++i) {
      hwloc_obj_t c = hwloc_get_obj_by_type(t->topo_, level, static_cast<unsigned>(i));
      t->llc_bytes_ += c->attr ? c->attr->cache.size : 0;
    }
    if (count > 0) break;  // the last level present
  }

  for (hwloc_obj_t pci = hwloc_get_next_pcidev(t->topo_, nullptr); pci;
       pci = hwloc_get_next_pcidev(t->topo_, pci)) {
    const auto& a = pci->attr->pcidev;
    if (a.vendor_id != 0x10de || (a.class_id >> 8) != 0x03) continue;  // NVIDIA display/3D controller
    GpuDevice g;
    g.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
      if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
      if (!g.os_names.empty()) g.os_names += ' ';
      g.os_names += c->name;
    }
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->topo_, pci);
    g.local_nodes = nodes_intersecting(t->nodes_, t->topo_, anc->nodeset);
    t->gpus_.push_back(std::move(g));
  }
  *out = std::move(t);
  return Status::ok();
}

int Topology::total_cores() const {
  int sum = 0;
  for (const NumaNode& n : nodes_) sum += n.cores;
  return sum;
}

Status Topology::nodes_near_pci(const std::string& bus_id, std::vector<int>* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "nodes_near_pci: out is null");
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo_, bus_id.c_str());
  if (!pci) {
    return error(StatusCode::kNotFound,
                 "pci_bus_id = \"{}\": no such PCI device in topology {} (expected e.g. \"0000:65:00.0\")",
                 bus_id, source_);
  }
  *out = nodes_intersecting(nodes_, topo_, hwloc_get_non_io_ancestor_obj(topo_, pci)->nodeset);
  return Status::ok();
}

Status Topology::nodes_near_cpus(const std::string& cpu_list_text, std::vector<int>* out) const {
  if (!out) return error(StatusCode::kInvalidArgument, "nodes_near_cpus: out is null");
  Bitmap cpus;
  // (hwloc reads "4-" as every CPU from 4 on, and "-1" as a set with no first CPU: no lists of CPUs.)
  if (hwloc_bitmap_list_sscanf(cpus.set, cpu_list_text.c_str()) != 0 || hwloc_bitmap_iszero(cpus.set) ||
      hwloc_bitmap_weight(cpus.set) < 0 || hwloc_bitmap_first(cpus.set) < 0) {
    return error(StatusCode::kInvalidArgument, "cpu_list = \"{}\", expected a CPU list such as \"0-15,32-47\"",
                 cpu_list_text);
  }
  // A CPU the machine lacks is a mistake in the list, not a CPU to ignore.
  const hwloc_const_cpuset_t machine = hwloc_topology_get_complete_cpuset(topo_);
  if (!hwloc_bitmap_isincluded(cpus.set, machine)) {
    Bitmap missing;
    hwloc_bitmap_andnot(missing.set, cpus.set, machine);
    return error(StatusCode::kInvalidArgument,
                 "cpu_list = \"{}\" names CPUs {} that this machine lacks or this process may not run on (it may "
                 "use {})",
                 cpu_list_text, cpu_list(missing.set), cpu_list(machine));
  }
  out->clear();
  for (const NumaNode& n : nodes_) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n.index));
    if (hwloc_bitmap_intersects(obj->cpuset, cpus.set)) out->push_back(n.index);
  }
  return Status::ok();
}

bool Topology::memory_binding_supported() const {
  if (!this_system_) return false;
  const hwloc_topology_support* s = hwloc_topology_get_support(topo_);
  return s && s->membind && s->membind->alloc_membind && s->membind->bind_membind;
}

std::string Topology::describe() const {
  // The machine's memory from the OS's page count: the per-node figures hwloc reads from sysfs can
  // be far below it in a virtual machine or container (14 of 128 GiB on the GPU machine).
  uint64_t memory = 0;
  for (const NumaNode& n : nodes_) memory += n.memory_bytes;
  if (this_system_) memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  std::string s = fmt::format("topology {}{}: {} NUMA node(s), {} cores, last-level cache {:.0f} MiB, {:.1f} GiB of memory\n",
                              source_, this_system_ ? " (this machine)" : "", nodes_.size(), total_cores(),
                              static_cast<double>(llc_bytes_) / (1 << 20), static_cast<double>(memory) / (1 << 30));
  for (const NumaNode& n : nodes_) {
    s += fmt::format("  node {} (os {}): {} cores, {} hw threads, cpus {}, {:.1f} GiB local memory as the OS reports it\n",
                     n.index, n.os_index, n.cores, n.hw_threads, n.cpus.empty() ? "-" : n.cpus,
                     static_cast<double>(n.memory_bytes) / (1 << 30));
  }
  if (gpus_.empty()) s += "  GPUs: none found by hwloc (PCI vendor 0x10de)\n";
  for (const GpuDevice& g : gpus_) {
    s += fmt::format("  GPU {}{}: local to node(s) {}\n", g.pci_bus_id,
                     g.os_names.empty() ? "" : " (" + g.os_names + ")", fmt::join(g.local_nodes, ", "));
  }
  return s;
}

// ---- node-bound memory ----

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// Anonymous pages for `bytes`, starting on a 2 MiB boundary when they span one, and advised
/// MADV_HUGEPAGE (the system may leave transparent huge pages to madvise). The engine streams
/// context caches at DRAM speed; with 4 KiB pages every 16 keys (D = 128, bf16) of K and of V cost a
/// page walk, which in a VM (nested paging) measured 41 against 30 ns per key on one Zen 4 core. THP
/// backs only the 2 MiB-aligned stretches of a mapping, and mmap aligns to 4 KiB (kernels before 6.7
/// even for multiples of 2 MiB): 2.56 MB allocations were 61 % huge pages, and the engine read such
/// heads at 23.7 against 28.9 GB/s on the dev VM (bench/results/session42).
void* map_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - kHugePageBytes - page) {
    errno = ENOMEM;
    return nullptr;
  }
  const std::size_t length = (bytes + page - 1) / page * page;
  const std::size_t pad = length >= kHugePageBytes ? kHugePageBytes : 0;
  void* raw = ::mmap(nullptr, length + pad, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* base = static_cast<std::byte*>(raw);
  if (pad > 0) {  // keep the aligned `length`, give back the rest
    const std::size_t head = (kHugePageBytes - reinterpret_cast<std::uintptr_t>(base) % kHugePageBytes) % kHugePageBytes;
    if (head > 0) ::munmap(base, head);
    if (pad - head > 0) ::munmap(base + head + length, pad - head);
    base += head;
#if defined(MADV_HUGEPAGE)
    ::madvise(base, length, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  }
  return base;
}

}  // namespace

void* node_alloc(const Topology& topology, int node, std::size_t bytes, bool* bound) {
  if (bound) *bound = false;
  if (bytes == 0) bytes = 1;
  void* p = map_pages(bytes);
  if (!p) return nullptr;
  hwloc_topology_t topo = topology.handle();
  hwloc_obj_t obj = (node >= 0 && node < topology.node_count())
                        ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(node))
                        : nullptr;
  if (obj && topology.memory_binding_supported()) {
    // STRICT: fail rather than leave pages silently unbound, so that we can say so. The pages are
    // not touched yet: binding them first places every one on the node.
    if (hwloc_set_area_membind(topo, p, bytes, obj->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT) == 0) {
      if (bound) *bound = true;
      return p;
    }
    if (errno == ENOMEM) {
      node_free(p, bytes);
      errno = ENOMEM;
      return nullptr;
    }
    warn_once(fmt::format("hgca: binding memory to NUMA node {} failed ({}); using unbound pages placed "
                          "by first touch",
                          node, std::strerror(errno)));
  } else if (topology.is_this_system() && topology.node_count() > 1) {
    warn_once("hgca: this system does not support binding memory to NUMA nodes through hwloc; using "
              "unbound pages placed by first touch");
  }
  return p;
}

void node_free(void* p, std::size_t bytes) noexcept {
  if (p) ::munmap(p, bytes == 0 ? 1 : bytes);
}

int node_of_memory(const Topology& topology, const void* p, std::size_t bytes) {
  if (!topology.memory_binding_supported() || !p) return -1;
  Bitmap nodeset;
  hwloc_membind_policy_t policy{};
  if (hwloc_get_area_membind(topology.handle(), p, bytes == 0 ? 1 : bytes, nodeset.set, &policy,
                             HWLOC_MEMBIND_BYNODESET) != 0) {
    return -1;
  }
  if (policy != HWLOC_MEMBIND_BIND || hwloc_bitmap_weight(nodeset.set) != 1) return -1;
  const std::vector<int> nodes = nodes_intersecting(topology.nodes(), topology.handle(), nodeset.set);
  return nodes.size() == 1 ? nodes[0] : -1;
}

// ---- Pool ----

/// Binds the workers that join one arena to its node's CPUs, for when oneTBB cannot (no tbbbind).
class Pool::NodeBinder final : public tbb::task_scheduler_observer {
 public:
  NodeBinder(tbb::task_arena& arena, hwloc_topology_t topo, const NumaNode& node, hwloc_const_cpuset_t cpus, bool warn)
      : tbb::task_scheduler_observer(arena), topo_(topo), node_(node), cpus_(hwloc_bitmap_dup(cpus)), warn_(warn) {
    observe(true);
  }
  ~NodeBinder() override {
    observe(false);
    hwloc_bitmap_free(cpus_);
  }
  void on_scheduler_entry(bool is_worker) override {
    // Only workers: the caller of execute() keeps its own binding. A worker's own is put back as
    // it leaves: oneTBB's workers serve every arena of the process, the application's too.
    if (!is_worker) return;
    // Saved by the OS's call: hwloc's get would cut the mask down to the topology's CPUs (a test
    // topology's 2 of the machine's 16).
    Saved& saved = saved_binding();
    saved.valid = sched_getaffinity(0, sizeof saved.cpus, &saved.cpus) == 0;
    if (hwloc_set_cpubind(topo_, cpus_, HWLOC_CPUBIND_THREAD) == 0) return;
    const int err = errno;
    if (!failed_.exchange(true) && warn_) {
      warn_once(fmt::format("hgca: a worker of NUMA node {} could not be bound to its CPUs {} ({}); its work may "
                            "run on other nodes' cores",
                            node_.index, node_.cpus, std::strerror(err)));
    }
  }
  void on_scheduler_exit(bool is_worker) override {
    if (!is_worker) return;
    Saved& saved = saved_binding();
    if (saved.valid) sched_setaffinity(0, sizeof saved.cpus, &saved.cpus);  // as it was: nothing to report
    saved.valid = false;
  }
  /// Whether a worker could not be bound (Pool::numa_bound then says false).
  bool failed() const { return failed_.load(); }

 private:
  /// The binding a worker had before it entered (a worker is in one arena at a time).
  struct Saved {
    cpu_set_t cpus;
    bool valid = false;
  };
  static Saved& saved_binding() {
    thread_local Saved saved;
    return saved;
  }

  hwloc_topology_t topo_;
  const NumaNode node_;
  hwloc_cpuset_t cpus_;
  const bool warn_;  // PoolOptions::warn_on_stderr
  std::atomic<bool> failed_{false};
};

Pool::~Pool() = default;

namespace {

/// oneTBB's NUMA nodes. Under AddressSanitizer they are what oneTBB reports without its hwloc
/// binding ({-1}: unbound): oneTBB before 2021.10 (Debian 12 has 2021.8) dlopens that binding with
/// RTLD_DEEPBIND, which the sanitizer runtime refuses by aborting the process.
std::vector<int> tbb_numa_nodes() {
#if defined(__SANITIZE_ADDRESS__)
  return {-1};
#else
  return tbb::info::numa_nodes();
#endif
}

}  // namespace

Status Pool::create(std::shared_ptr<const Topology> topology, const PoolOptions& options,
                    std::unique_ptr<Pool>* out) {
  if (!out) return error(StatusCode::kInvalidArgument, "Pool::create: out is null");
  if (!topology) return error(StatusCode::kInvalidArgument, "Pool::create: topology is null");
  if (options.threads < 0) {
    return error(StatusCode::kInvalidArgument, "threads = {}, expected ≥ 0 (0: every core)", options.threads);
  }
  if (options.threads_per_node < 0) {
    return error(StatusCode::kInvalidArgument, "threads_per_node = {}, expected ≥ 0 (0: every core of the node)",
                 options.threads_per_node);
  }
  std::unique_ptr<Pool> pool(new Pool());
  pool->topology_ = std::move(topology);
  const Topology& topo = *pool->topology_;
  const int n = topo.node_count();

  std::vector<int> cores, hw_threads;
  for (const NumaNode& node : topo.nodes()) {
    cores.push_back(node.cores);
    hw_threads.push_back(node.hw_threads);
  }
  pool->threads_ = split_threads(cores, hw_threads, options.threads, options.threads_per_node, options.preferred_nodes);
  if (pool->total_threads() == 0) {
    return error(StatusCode::kInvalidArgument, "threads = {}, threads_per_node = {}: no node gets a thread on {}",
                 options.threads, options.threads_per_node, topo.source());
  }

  const std::vector<int> tbb_nodes = options.tbb_numa_nodes ? *options.tbb_numa_nodes : tbb_numa_nodes();
  bool tbb_binds = false;
  if (!topo.is_this_system()) {
    pool->diagnostics_.push_back(fmt::format(
        "hgca: topology {} is not this machine's: its {} arenas run unbound and its memory is not bound",
        topo.source(), n));
  } else if (n > 1) {
    const std::string warning = numa_binding_warning(n, tbb_nodes);
    if (warning.empty()) {
      tbb_binds = true;
    } else {
      pool->diagnostics_.push_back(warning);
    }
  }
  if (options.warn_on_stderr) {
    for (const std::string& d : pool->diagnostics_) {
      if (topo.is_this_system()) warn_once(d);  // a test topology is no news to its caller
    }
  }

  pool->arenas_.resize(static_cast<std::size_t>(n));
  pool->background_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int threads = pool->threads_[static_cast<std::size_t>(i)];
    if (threads <= 0) continue;
    const bool by_tbb = tbb_binds && std::find(tbb_nodes.begin(), tbb_nodes.end(), i) != tbb_nodes.end();
    // Background work takes fewer than half the node's threads: a worker leaves it only when its
    // task ends, so with every core in it a step's work (and CUDA's callback thread) waited for
    // cores (hgca-decode's first decode steps after a prefill: 17-29 ms with all 16 threads there,
    // under 1 ms with 7 of 16; bench/results/gpu-runtime/decode-steps). Its slots are all
    // workers' (none reserved for a caller): its tasks must run while nobody waits for them.
    const int background_threads = std::max(1, threads / 2 - 1);
    for (auto [arena, slots, reserved, priority] :
         {std::tuple{&pool->arenas_[static_cast<std::size_t>(i)], threads, 1u, tbb::task_arena::priority::normal},
          {&pool->background_[static_cast<std::size_t>(i)], background_threads, 0u, tbb::task_arena::priority::low}}) {
      if (by_tbb) {
        *arena = std::make_unique<tbb::task_arena>(tbb::task_arena::constraints(i, slots), reserved, priority);
        continue;
      }
      *arena = std::make_unique<tbb::task_arena>(slots, reserved, priority);
      if (topo.is_this_system() && n > 1) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo.handle(), HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
        pool->binders_.push_back(
            std::make_unique<NodeBinder>(**arena, topo.handle(), topo.nodes()[static_cast<std::size_t>(i)], obj->cpuset,
                                         options.warn_on_stderr));
      }
    }
  }
  for (int i = 0; i < n; ++i) pool->arena_of_node_.push_back(&pool->arena(i));
  // One node on this machine: nothing to confine. Several: oneTBB or our binders confine them.
  pool->bound_ = topo.is_this_system();
  *out = std::move(pool);
  return Status::ok();
}

bool Pool::numa_bound() const {
  return bound_ && std::none_of(binders_.begin(), binders_.end(), [](const auto& b) { return b->failed(); });
}

int Pool::total_threads() const {
  int sum = 0;
  for (int t : threads_) sum += t;
  return sum;
}

namespace {

/// `node`'s arena of `arenas`, or the first node's that has threads (create() guarantees one).
tbb::task_arena& arena_or_first(const std::vector<std::unique_ptr<tbb::task_arena>>& arenas, int node) {
  if (node >= 0 && node < static_cast<int>(arenas.size()) && arenas[static_cast<std::size_t>(node)]) {
    return *arenas[static_cast<std::size_t>(node)];
  }
  for (const auto& a : arenas) {
    if (a) return *a;
  }
  return *arenas.front();
}

}  // namespace

tbb::task_arena& Pool::arena(int node) { return arena_or_first(arenas_, node); }
tbb::task_arena& Pool::background(int node) { return arena_or_first(background_, node); }

}  // namespace hgca::cpu
