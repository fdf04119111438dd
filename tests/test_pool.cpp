// The NUMA pool's decisions on 2- and 4-node machines we do not have (hwloc synthetic and XML
// topologies), its arenas, and node-bound memory on this machine.
#include <sched.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cpu/placement.hpp"
#include "cpu/pool.hpp"
#include "data_dir.hpp"

namespace hgca::cpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const Topology> synthetic(const std::string& description) {
  std::shared_ptr<const Topology> t;
  const Status s = Topology::from_synthetic(description, &t);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return t;
}

// 2 packages × (1 NUMA node, 2 cores), an NVIDIA GPU (0000:65:00.0) on package 1. No XML comments
// in it: hwloc's minimal parser (used where its libxml2 plugin is not loaded) rejects them.
const std::string kGpuXml = hgca::test::data_dir("HGCA_TEST_DATA_DIR", HGCA_TEST_DATA_DIR) + "/topo-2node-gpu.xml";

TEST(Topology, TwoAndFourNodeSynthetic) {
  auto two = synthetic("pack:2 numa:1 core:4 pu:1");
  ASSERT_TRUE(two);
  EXPECT_FALSE(two->is_this_system());
  ASSERT_EQ(two->node_count(), 2);
  EXPECT_EQ(two->total_cores(), 8);
  for (const NumaNode& n : two->nodes()) {
    EXPECT_EQ(n.cores, 4);
    EXPECT_EQ(n.hw_threads, 4);
  }
  EXPECT_EQ(two->nodes()[1].cpus, "4-7");

  auto four = synthetic("pack:4 numa:1 core:6 pu:2");
  ASSERT_TRUE(four);
  ASSERT_EQ(four->node_count(), 4);
  EXPECT_EQ(four->total_cores(), 24);
  for (const NumaNode& n : four->nodes()) {
    EXPECT_EQ(n.cores, 6);
    EXPECT_EQ(n.hw_threads, 12);
  }
  EXPECT_TRUE(four->gpus().empty());
  EXPECT_THAT(four->describe(), HasSubstr("4 NUMA node(s), 24 cores"));
}

// Two memory nodes under one package (DDR and HBM, or a CXL memory node) share its cpuset in hwloc 2:
// its cores count for the first only, the other is a memory node (they counted twice: 16 cores and
// two arenas on the same 4 cores per package).
TEST(Topology, NodesSharingAPackagesCoresCountThemOnce) {
  auto t = synthetic("pack:2 [numa] [numa] core:4 pu:1");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->node_count(), 4);
  EXPECT_EQ(t->total_cores(), 8);
  std::vector<int> cores;
  std::vector<std::string> cpus;
  for (const NumaNode& n : t->nodes()) {
    cores.push_back(n.cores);
    cpus.push_back(n.cpus);
  }
  EXPECT_THAT(cores, ElementsAre(4, 0, 4, 0));
  EXPECT_THAT(cpus, ElementsAre("0-3", "", "4-7", ""));
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.tbb_numa_nodes = std::vector<int>{-1};
  o.warn_on_stderr = false;
  ASSERT_TRUE(Pool::create(t, o, &pool).is_ok());
  EXPECT_THAT(pool->threads_per_node(), ElementsAre(4, 0, 4, 0));
}

// The machine's memory in the first line; each node's as the OS reports it (a virtual machine's
// sysfs may report far less per node than the machine has: only the nodes' own figures say so).
TEST(Topology, DescribeGivesTheMachinesMemoryAndEachNodes) {
  auto two = synthetic("pack:2 numa:1(memory=1073741824) core:4 pu:1");
  ASSERT_TRUE(two);
  EXPECT_THAT(two->describe(), HasSubstr("2 NUMA node(s), 8 cores, last-level cache"));
  EXPECT_THAT(two->describe(), HasSubstr(", 2.0 GiB of memory\n"));
  EXPECT_THAT(two->describe(), HasSubstr("cpus 0-3, 1.0 GiB local memory as the OS reports it\n"));

  std::shared_ptr<const Topology> here;
  ASSERT_TRUE(Topology::from_machine(&here).is_ok());
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (meminfo >> key && key != "MemTotal:") meminfo.ignore(1 << 10, '\n');
  ASSERT_TRUE(meminfo >> kib) << "no MemTotal in /proc/meminfo";
  const std::string d = here->describe();
  const auto at = d.find(" GiB of memory");
  ASSERT_NE(at, std::string::npos) << d;
  const double gib = std::stod(d.substr(d.rfind(' ', at - 1) + 1, at));
  EXPECT_NEAR(gib, kib / (1 << 20), 0.06) << d;
}

TEST(Topology, BadSourcesNameWhatWasGiven) {
  std::shared_ptr<const Topology> t;
  Status s = Topology::from_synthetic("pack:two", &t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("synthetic = \"pack:two\""));
  s = Topology::from_xml("/nonexistent/topo.xml", &t);
  EXPECT_FALSE(s.is_ok());
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/topo.xml"));
}

TEST(Topology, GpuLocalityFromXml) {
  std::shared_ptr<const Topology> t;
  const Status s = Topology::from_xml(kGpuXml, &t);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(t->node_count(), 2);
  ASSERT_EQ(t->gpus().size(), 1u);
  EXPECT_EQ(t->gpus()[0].pci_bus_id, "0000:65:00.0");
  EXPECT_EQ(t->gpus()[0].os_names, "cuda0");
  EXPECT_THAT(t->gpus()[0].local_nodes, ElementsAre(1));

  // The bus id as CUDA (8-digit domain) and short forms name it too.
  for (const char* id : {"0000:65:00.0", "00000000:65:00.0", "65:00.0"}) {
    std::vector<int> nodes;
    const Status f = t->nodes_near_pci(id, &nodes);
    ASSERT_TRUE(f.is_ok()) << id << ": " << f.message();
    EXPECT_THAT(nodes, ElementsAre(1)) << id;
  }
  std::vector<int> nodes;
  const Status missing = t->nodes_near_pci("0000:17:00.0", &nodes);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("0000:17:00.0"));
}

TEST(Topology, GpuLocalityFromCpuList) {
  auto t = synthetic("pack:4 numa:1 core:4 pu:1");
  std::vector<int> nodes;
  ASSERT_TRUE(t->nodes_near_cpus("8-11", &nodes).is_ok());
  EXPECT_THAT(nodes, ElementsAre(2));
  ASSERT_TRUE(t->nodes_near_cpus("2-5", &nodes).is_ok());
  EXPECT_THAT(nodes, ElementsAre(0, 1));
  const Status bad = t->nodes_near_cpus("eight", &nodes);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("cpu_list = \"eight\""));
  for (const char* endless : {"-1", "4-"}) {  // hwloc reads them, as no list of CPUs
    const Status s = t->nodes_near_cpus(endless, &nodes);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << endless;
    EXPECT_THAT(s.message(), HasSubstr("expected a CPU list such as")) << endless;
  }
  const Status absent = t->nodes_near_cpus("14-20", &nodes);  // the machine has CPUs 0-15
  EXPECT_EQ(absent.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(absent.message(),
              HasSubstr("names CPUs 16-20 that this machine lacks or this process may not run on (it may use 0-15)"));
}

TEST(Placement, ThreadsPerNodeSplitting) {
  const std::vector<int> cores{8, 8}, hw{16, 16};
  EXPECT_THAT(split_threads(cores, hw, 0, 0), ElementsAre(8, 8));     // every core
  EXPECT_THAT(split_threads(cores, hw, 0, 4), ElementsAre(4, 4));     // asked per node
  EXPECT_THAT(split_threads(cores, hw, 0, 12), ElementsAre(12, 12));  // SMT threads allowed
  EXPECT_THAT(split_threads(cores, hw, 0, 40), ElementsAre(16, 16));  // capped at hw threads
  EXPECT_THAT(split_threads(cores, hw, 10, 0), ElementsAre(5, 5));    // total shared evenly
  EXPECT_THAT(split_threads(cores, hw, 7, 0), ElementsAre(4, 3));     // remainder to the lower node
  EXPECT_THAT(split_threads(cores, hw, 1, 0), ElementsAre(1, 0));     // fewer threads than nodes
  EXPECT_THAT(split_threads(cores, hw, 1, 0, std::vector<int>{1}), ElementsAre(0, 1));  // to the GPU's node
  EXPECT_THAT(split_threads(cores, hw, 7, 0, std::vector<int>{1}), ElementsAre(3, 4));
  EXPECT_THAT(split_threads(cores, hw, 100, 0), ElementsAre(8, 8));   // total is a cap, not a goal
  // Unequal nodes keep their proportions; a memory-only node gets nothing.
  EXPECT_THAT(split_threads(std::vector<int>{12, 4, 0, 8}, std::vector<int>{12, 4, 0, 8}, 12, 0),
              ElementsAre(6, 2, 0, 4));
  const std::vector<int> four(4, 6);
  const auto got = split_threads(four, four, 22, 0);
  EXPECT_EQ(std::accumulate(got.begin(), got.end(), 0), 22);
  EXPECT_THAT(got, ElementsAre(6, 6, 5, 5));
}

TEST(Placement, SequencesBalancedByLoad) {
  // 4 nodes of 4 threads; loads that LPT packs exactly: every node ends with 100.
  const std::vector<double> loads{60, 40, 50, 50, 70, 30, 80, 20};
  const std::vector<int> threads(4, 4);
  const auto node_of = assign_sequences(loads, threads, {}, NumaPlacement::kBalanced);
  std::vector<double> per_node(4, 0.0);
  for (std::size_t s = 0; s < loads.size(); ++s) {
    ASSERT_GE(node_of[s], 0);
    per_node[static_cast<std::size_t>(node_of[s])] += loads[s];
  }
  EXPECT_THAT(per_node, ElementsAre(100, 100, 100, 100));

  // Equal sequences spread round the nodes; a node with twice the threads takes twice the work.
  const std::vector<double> equal(12, 1.0);
  const auto spread = assign_sequences(equal, std::vector<int>{8, 4}, {}, NumaPlacement::kAuto);
  EXPECT_EQ(std::count(spread.begin(), spread.end(), 0), 8);
  EXPECT_EQ(std::count(spread.begin(), spread.end(), 1), 4);

  // No node with threads: nowhere to go.
  EXPECT_EQ(choose_node(std::vector<double>{0, 0}, std::vector<int>{0, 0}, {}, 1.0, NumaPlacement::kAuto), -1);
}

TEST(Placement, GpuLocalPreference) {
  const std::vector<int> threads{4, 4};
  const std::vector<int> gpu_node{1};
  // Empty machine: the GPU's node wins the tie under auto, node 0 under balanced.
  EXPECT_EQ(choose_node(std::vector<double>{0, 0}, threads, gpu_node, 10, NumaPlacement::kAuto), 1);
  EXPECT_EQ(choose_node(std::vector<double>{0, 0}, threads, gpu_node, 10, NumaPlacement::kBalanced), 0);
  // Auto keeps to the GPU's node while it finishes within 25 % of the best node ...
  EXPECT_EQ(choose_node(std::vector<double>{100, 120}, threads, gpu_node, 10, NumaPlacement::kAuto), 1);
  // ... and leaves it beyond that; gpu_local never does.
  EXPECT_EQ(choose_node(std::vector<double>{100, 200}, threads, gpu_node, 10, NumaPlacement::kAuto), 0);
  EXPECT_EQ(choose_node(std::vector<double>{100, 200}, threads, gpu_node, 10, NumaPlacement::kGpuLocal), 1);
  // A batch under auto: the GPU's node carries more, but no more than the slack allows.
  const std::vector<double> equal(20, 1.0);
  const auto node_of = assign_sequences(equal, threads, gpu_node, NumaPlacement::kAuto);
  const auto on_gpu_node = std::count(node_of.begin(), node_of.end(), 1);
  EXPECT_GT(on_gpu_node, 10);
  EXPECT_LE(on_gpu_node, 12);  // 11 of 20: the finish times stay within 25 % of each other
  // The GPU's nodes without threads: fall back to balanced.
  EXPECT_EQ(choose_node(std::vector<double>{0, 0}, std::vector<int>{4, 0}, gpu_node, 1, NumaPlacement::kGpuLocal), 0);
}

TEST(Pool, WarnsWhenOneTbbSeesFewerNodesThanHwloc) {
  EXPECT_THAT(numa_binding_warning(2, std::vector<int>{-1}), HasSubstr("oneTBB sees 1 NUMA node(s) [-1] but hwloc sees 2"));
  EXPECT_THAT(numa_binding_warning(4, std::vector<int>{0, 1}), HasSubstr("libtbbbind"));
  EXPECT_EQ(numa_binding_warning(2, std::vector<int>{0, 1}), "");
  EXPECT_EQ(numa_binding_warning(1, std::vector<int>{-1}), "");  // one node: nothing to confine
  EXPECT_EQ(numa_binding_warning(1, std::vector<int>{0}), "");
}

TEST(Pool, WarnsAndBindsItselfWhenTbbbindIsMissing) {
  // A 2-node machine (claiming to be this one) whose oneTBB lacks tbbbind: one node, id -1.
  std::shared_ptr<const Topology> t;
  ASSERT_TRUE(Topology::from_synthetic("pack:2 numa:1 core:1 pu:1", &t, /*as_this_system=*/true).is_ok());
  ASSERT_TRUE(t->is_this_system());
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.tbb_numa_nodes = std::vector<int>{-1};
  o.warn_on_stderr = false;
  const Status s = Pool::create(t, o, &pool);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(pool->diagnostics().size(), 1u);
  EXPECT_THAT(pool->diagnostics()[0], HasSubstr("oneTBB sees 1 NUMA node(s) [-1] but hwloc sees 2"));
  EXPECT_TRUE(pool->numa_bound());  // by hgca's own binders
  for (int node = 0; node < 2; ++node) {
    EXPECT_EQ(pool->execute(node, [] { return 41 + 1; }), 42);
  }
}

// hgca's binding of a node's workers fails (here: node 1's CPUs are not this machine's): numa_bound
// says so once a worker has tried (it said true, and the failure was silent).
TEST(Pool, AWorkerThatCannotBeBoundClearsNumaBound) {
  std::shared_ptr<const Topology> t;
  ASSERT_TRUE(Topology::from_synthetic("pack:2 numa:1 core:2 pu:1(indexes=0,1,900,901)", &t, /*as_this_system=*/true)
                  .is_ok());
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.threads_per_node = 2;
  o.tbb_numa_nodes = std::vector<int>{-1};
  o.warn_on_stderr = false;
  ASSERT_TRUE(Pool::create(t, o, &pool).is_ok());
  EXPECT_TRUE(pool->numa_bound());  // nobody tried yet
  std::atomic<bool> ran{false};
  pool->arena(1).enqueue([&] { ran = true; });  // on a worker, which the binder binds as it enters
  for (int i = 0; i < 2000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(ran);
  EXPECT_FALSE(pool->numa_bound());
}

// Nodes of one thread each still work at once (their arenas had no worker's slot: the caller ran
// the nodes' work one after another): both bodies must be running together to meet.
TEST(Pool, NodesOfOneThreadWorkAtOnce) {
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, 4);  // on a 1- or 2-core host too
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.threads_per_node = 1;
  o.tbb_numa_nodes = std::vector<int>{-1};
  o.warn_on_stderr = false;
  ASSERT_TRUE(Pool::create(synthetic("pack:2 numa:1 core:1 pu:1"), o, &pool).is_ok());
  ASSERT_THAT(pool->threads_per_node(), ElementsAre(1, 1));
  std::atomic<int> arrived{0};
  std::atomic<bool> met[2] = {false, false};
  const std::vector<int> nodes{0, 1};
  run_in_arenas(pool->arenas(), nodes, [&](int node) {
    ++arrived;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    met[node] = arrived.load() == 2;
  });
  EXPECT_TRUE(met[0] && met[1]) << "the two nodes' work ran one after the other";
}

// A worker hgca's binder bound to a node gets its own binding back as it leaves the arena: oneTBB's
// workers also serve the application's arenas (the worker stayed on the node's CPUs).
TEST(Pool, BoundWorkersGetTheirBindingBackAsTheyLeave) {
  tbb::global_control one_worker(tbb::global_control::max_allowed_parallelism, 2);
  auto affinity = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    return set;
  };
  const cpu_set_t process = affinity();
  if (CPU_COUNT(&process) < 2) GTEST_SKIP() << "one CPU: nothing to bind apart";
  std::shared_ptr<const Topology> t;
  ASSERT_TRUE(Topology::from_synthetic("pack:2 numa:1 core:1 pu:1", &t, /*as_this_system=*/true).is_ok());
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.tbb_numa_nodes = std::vector<int>{-1};
  o.warn_on_stderr = false;
  ASSERT_TRUE(Pool::create(t, o, &pool).is_ok());
  std::atomic<bool> done{false};
  std::thread::id worker;
  cpu_set_t inside;
  pool->arena(1).enqueue([&] {
    worker = std::this_thread::get_id();
    inside = affinity();
    done = true;
  });
  for (int i = 0; i < 2000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(done);
  ASSERT_EQ(CPU_COUNT(&inside), 1) << "the binder did not bind the worker to node 1's CPU";
  // The same worker, in another arena: its binding is the process's again.
  tbb::task_arena other(2, 0);
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::atomic<bool> ran{false};
    std::thread::id who;
    cpu_set_t after;
    other.enqueue([&] {
      who = std::this_thread::get_id();
      after = affinity();
      ran = true;
    });
    for (int i = 0; i < 2000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(ran);
    if (who != worker) continue;
    EXPECT_TRUE(CPU_EQUAL(&after, &process)) << "the worker kept " << CPU_COUNT(&after) << " CPU(s)";
    return;
  }
  GTEST_SKIP() << "the bound worker did not come to the other arena";
}

TEST(Pool, ArenasPerNodeOnASyntheticMachine) {
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.threads_per_node = 1;
  o.tbb_numa_nodes = std::vector<int>{-1};
  const Status s = Pool::create(synthetic("pack:4 numa:1 core:4 pu:1"), o, &pool);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(pool->node_count(), 4);
  EXPECT_THAT(pool->threads_per_node(), ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(pool->total_threads(), 4);
  EXPECT_FALSE(pool->numa_bound());
  ASSERT_EQ(pool->diagnostics().size(), 1u);
  EXPECT_THAT(pool->diagnostics()[0], HasSubstr("not this machine's"));
  for (int node = 0; node < 4; ++node) {
    std::atomic<int> sum{0};
    const int concurrency = pool->execute(node, [&] {
      tbb::parallel_for(0, 100, [&](int i) { sum += i; });
      return tbb::this_task_arena::max_concurrency();
    });
    EXPECT_EQ(sum.load(), 4950);
    EXPECT_EQ(concurrency, 1) << "node " << node;
  }
}

// Each node's background arena (re-evaluations) has threads / 2 − 1 workers, at least one, so that a
// step's work keeps more than half the cores; a node without threads uses the first node that has
// some, as arena() does.
TEST(Pool, BackgroundArenasHaveFewerThanHalfTheThreads) {
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.threads_per_node = 0;
  o.tbb_numa_nodes = std::vector<int>{-1};
  const Status s = Pool::create(synthetic("pack:3 numa:1 core:7 pu:1"), o, &pool);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_THAT(pool->threads_per_node(), ElementsAre(7, 7, 7));
  for (int node = 0; node < 3; ++node) {
    EXPECT_EQ(pool->background(node).max_concurrency(), 2) << "node " << node;
    EXPECT_EQ(pool->arena(node).max_concurrency(), 7) << "node " << node;
    EXPECT_NE(&pool->background(node), &pool->arena(node));
  }
  std::unique_ptr<Pool> one;
  o.threads_per_node = 1;
  ASSERT_TRUE(Pool::create(synthetic("pack:2 numa:1 core:2 pu:1"), o, &one).is_ok());
  EXPECT_EQ(one->background(1).max_concurrency(), 1);
  EXPECT_EQ(&one->background(7), &one->background(0));  // no such node: the first node's
}

// A task started in a background arena of one slot runs without anyone waiting for it (a
// re-evaluation must publish while decode steps go on): the slot is a worker's, not a caller's.
TEST(Pool, BackgroundTasksRunWithoutAWaitingCaller) {
  std::unique_ptr<Pool> pool;
  PoolOptions o;
  o.threads_per_node = 2;
  o.tbb_numa_nodes = std::vector<int>{-1};
  ASSERT_TRUE(Pool::create(synthetic("pack:1 numa:1 core:2 pu:1"), o, &pool).is_ok());
  ASSERT_EQ(pool->background(0).max_concurrency(), 1);
  tbb::task_group tasks;
  std::atomic<bool> ran{false};
  pool->background(0).execute([&] { tasks.run([&] { ran = true; }); });
  for (int i = 0; i < 2000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(ran) << "the task waited 10 s for a caller to join the arena";
  pool->background(0).execute([&] { tasks.wait(); });
}

TEST(Pool, ThisMachine) {
  std::shared_ptr<const Topology> t;
  ASSERT_TRUE(Topology::from_machine(&t).is_ok());
  EXPECT_TRUE(t->is_this_system());
  ASSERT_GE(t->node_count(), 1);
  std::unique_ptr<Pool> pool;
  ASSERT_TRUE(Pool::create(t, {}, &pool).is_ok());
  EXPECT_EQ(pool->total_threads(), t->total_cores());
  EXPECT_TRUE(pool->numa_bound());
  const int threads = pool->execute(0, [] { return tbb::this_task_arena::max_concurrency(); });
  EXPECT_EQ(threads, pool->threads(0));

  std::unique_ptr<Pool> none;
  PoolOptions bad;
  bad.threads = -1;
  const Status s = Pool::create(t, bad, &none);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("threads = -1"));
}

// From 2 MiB up, node memory starts on a 2 MiB boundary, so that transparent huge pages can back
// every whole 2 MiB of it (mmap's own 4 KiB alignment left the first and last partly on small pages).
TEST(NodeAlloc, LargeAllocationsStartOnAHugePageBoundary) {
  std::shared_ptr<const Topology> machine;
  ASSERT_TRUE(Topology::from_machine(&machine).is_ok());
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  std::vector<std::pair<void*, std::size_t>> held;
  for (std::size_t bytes : {std::size_t{2} << 20, (std::size_t{3} << 20) + 5, std::size_t{10000} * 256}) {
    for (int i = 0; i < 4; ++i) {  // several, so that a lucky mmap address cannot pass alone
      bool bound = false;
      void* p = node_alloc(*machine, 0, bytes, &bound);
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHuge, 0u) << bytes;
      static_cast<char*>(p)[0] = 1;
      static_cast<char*>(p)[bytes - 1] = 2;  // all of it is there
      if (bound) {
        EXPECT_EQ(node_of_memory(*machine, p, bytes), 0);
      }
      held.emplace_back(p, bytes);
    }
  }
  void* small = node_alloc(*machine, 0, 64 << 10);  // below 2 MiB: pages, no padding
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 4096, 0u);
  node_free(small, 64 << 10);
  for (auto [p, bytes] : held) node_free(p, bytes);
}

TEST(NodeAllocator, VectorOnEachNode) {
  std::shared_ptr<const Topology> machine;
  ASSERT_TRUE(Topology::from_machine(&machine).is_ok());
  for (int node = 0; node < machine->node_count(); ++node) {
    std::vector<float, NodeAllocator<float>> v(NodeAllocator<float>(machine, node));
    v.resize(1 << 20, 1.5f);
    EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0.0), 1.5 * (1 << 20));
    if (machine->memory_binding_supported()) {
      EXPECT_EQ(node_of_memory(*machine, v.data(), v.size() * sizeof(float)), node) << "node " << node;
    } else {
      GTEST_LOG_(INFO) << "memory binding unsupported here: binding not checked";
    }
  }
  // A topology that is not this machine's: plain pages, still usable, reported as unbound.
  auto two = synthetic("pack:2 numa:1 core:2 pu:1");
  bool bound = true;
  void* p = node_alloc(*two, 1, 4096 * 3, &bound);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(bound);
  static_cast<char*>(p)[4096 * 3 - 1] = 1;
  EXPECT_EQ(node_of_memory(*two, p, 4096 * 3), -1);
  node_free(p, 4096 * 3);

  std::vector<int, NodeAllocator<int>> w(100, 7, NodeAllocator<int>(two, 0));
  EXPECT_EQ(std::accumulate(w.begin(), w.end(), 0), 700);
  // Rebinding keeps topology and node.
  NodeAllocator<double> d(w.get_allocator());
  EXPECT_EQ(d.node(), 0);
  EXPECT_TRUE(d == w.get_allocator());
}

}  // namespace
}  // namespace hgca::cpu
