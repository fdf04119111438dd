// The runtime on its NUMA pool, on machines we do not have (hwloc synthetic and XML topologies):
// threads per node, where sequences go under each placement, the engine configuration the options
// (and hgca-tune's JSON) give it, a forced ISA path the CPU lacks, and results that do not depend on
// the nodes or the thread counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "config_json.hpp"
#include "cpu/pool.hpp"
#include "cpu/sparse_engine.hpp"
#include "data_dir.hpp"
#include "hgca/hgca.hpp"
#include "reference/reference.hpp"
#include "runtime_backends.hpp"

namespace hgca {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kGpuXml = test::data_dir("HGCA_TEST_DATA_DIR", HGCA_TEST_DATA_DIR) + "/topo-2node-gpu.xml";  // GPU 0000:65:00.0 on node 1

Machine synthetic(const std::string& description) {
  Machine m;
  EXPECT_TRUE(cpu::Topology::from_synthetic(description, &m.topology).is_ok()) << description;
  m.isas = cpu::supported_isas();
  return m;
}

Machine from_xml(const std::string& path, const std::string& gpu_pci_bus_id) {
  Machine m;
  const Status s = cpu::Topology::from_xml(path, &m.topology);
  EXPECT_TRUE(s.is_ok()) << s.message();
  m.isas = cpu::supported_isas();
  m.gpu_pci_bus_id = gpu_pci_bus_id;
  return m;
}

Machine this_machine() {
  Machine m;
  EXPECT_TRUE(Machine::current(&m).is_ok());
  return m;
}

Options model() {
  Options o;
  o.n_layers = 1;
  o.n_q_heads = 4;
  o.n_kv_heads = 2;
  o.head_dim = 16;
  o.dtype = DType::kFloat32;
  o.window_blocks = 2;
  o.block_tokens = 4;
  o.backend = Backend::kHost;
  return o;
}

std::unique_ptr<Runtime> create(const Options& o, const Machine& m) {
  std::unique_ptr<Runtime> rt;
  const Status s = create_runtime(o, m, &rt);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return rt;
}

CpuStats cpu_stats(const Runtime& rt) {
  CpuStats st;
  const Status s = rt.cpu_stats(&st);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return st;
}

std::vector<int32_t> threads_of(const Runtime& rt) {
  std::vector<int32_t> out;
  for (const NumaNodeStats& n : cpu_stats(rt).nodes) out.push_back(n.threads);
  return out;
}

/// Adds the sequences and returns the node each was given.
std::vector<int32_t> add(Runtime& rt, const std::vector<SeqId>& ids) {
  std::vector<int32_t> nodes;
  for (SeqId id : ids) {
    EXPECT_TRUE(rt.add_sequence(id).is_ok());
    int32_t node = -1;
    EXPECT_TRUE(rt.sequence_node(id, &node).is_ok());
    nodes.push_back(node);
  }
  return nodes;
}

/// One step that grows the sequences by n_new tokens (the values do not matter here).
void grow(Runtime& rt, const std::vector<SeqId>& ids, const std::vector<int32_t>& n_new) {
  const Options& o = rt.options();
  const int64_t t = std::accumulate(n_new.begin(), n_new.end(), int64_t{0});
  std::vector<float> q(static_cast<std::size_t>(t * o.n_q_heads * o.head_dim), 0.25f);
  std::vector<float> kv(static_cast<std::size_t>(t * o.n_kv_heads * o.head_dim), 0.5f);
  std::vector<float> out(q.size());
  ASSERT_TRUE(rt.begin_step(ids, n_new).is_ok());
  for (int32_t l = 0; l < o.n_layers; ++l) {
    const Status s = rt.attention(l, {q.data(), o.dtype, {t, o.n_q_heads, o.head_dim}},
                                  {kv.data(), o.dtype, {t, o.n_kv_heads, o.head_dim}},
                                  {kv.data(), o.dtype, {t, o.n_kv_heads, o.head_dim}},
                                  {out.data(), o.dtype, {t, o.n_q_heads, o.head_dim}});
    ASSERT_TRUE(s.is_ok()) << s.message();
  }
  ASSERT_TRUE(rt.end_step().is_ok());
}

TEST(RuntimeNuma, PoolHonoursThreadsAndThreadsPerNode) {
  const Machine two = synthetic("pack:2 numa:1 core:4 pu:2");  // 4 cores, 8 hardware threads a node
  struct Case {
    int32_t threads, threads_per_node;
    std::vector<int32_t> want;
  };
  const Case cases[] = {
      {0, 0, {4, 4}},  // every core
      {0, 2, {2, 2}},  // asked per node
      {0, 6, {6, 6}},  // SMT threads when asked
      {3, 0, {2, 1}},  // a total shared among the nodes
      {6, 6, {3, 3}},  // the total caps the per-node ask
  };
  for (const Case& c : cases) {
    Options o = model();
    o.threads = c.threads;
    o.threads_per_node = c.threads_per_node;
    const auto rt = create(o, two);
    ASSERT_TRUE(rt);
    EXPECT_EQ(threads_of(*rt), c.want) << "threads " << c.threads << ", threads_per_node " << c.threads_per_node;
    EXPECT_FALSE(cpu_stats(*rt).numa_bound);  // not this machine: arenas unbound
  }
  // Four nodes, three threads: the fourth node gets none, and so no sequence.
  Options o = model();
  o.threads = 3;
  o.max_sequences = 8;
  const auto rt = create(o, synthetic("pack:4 numa:1 core:2 pu:1"));
  ASSERT_TRUE(rt);
  EXPECT_THAT(threads_of(*rt), ElementsAre(1, 1, 1, 0));
  EXPECT_THAT(add(*rt, {1, 2, 3, 4, 5, 6}), ElementsAre(0, 1, 2, 0, 1, 2));
  // This machine: its pool is bound, and threads_per_node is honoured on its node(s).
  o = model();
  o.threads_per_node = 1;
  const auto here = create(o, this_machine());
  const CpuStats st = cpu_stats(*here);
  EXPECT_TRUE(st.numa_bound);
  for (const NumaNodeStats& n : st.nodes) EXPECT_EQ(n.threads, 1);
}

TEST(RuntimeNuma, BalancedPlacementFollowsTheNodesLoad) {
  Options o = model();
  o.numa_placement = NumaPlacement::kBalanced;
  const auto rt = create(o, synthetic("pack:4 numa:1 core:1 pu:1"));
  ASSERT_TRUE(rt);
  // New sequences spread round the nodes.
  EXPECT_THAT(add(*rt, {1, 2, 3, 4, 5}), ElementsAre(0, 1, 2, 3, 0));
  std::vector<int64_t> per_node;
  for (const NumaNodeStats& n : cpu_stats(*rt).nodes) per_node.push_back(n.sequences);
  EXPECT_THAT(per_node, ElementsAre(2, 1, 1, 1));

  // A node's load is its sequences' lengths: the next sequences go where the history is shortest.
  grow(*rt, {1, 2, 3, 4, 5}, {2, 30, 20, 4, 2});  // node loads (2+1) + (2+1), 31, 21, 5
  // 6 → node 3 (its finish 5 + 1 beats 6 + 1); 7 ties at 7 (the lower node); 8 → node 3 again.
  EXPECT_THAT(add(*rt, {6, 7, 8}), ElementsAre(3, 0, 3));
  // A released sequence's load leaves with it.
  ASSERT_TRUE(rt->release_sequence(2).is_ok());
  EXPECT_THAT(add(*rt, {9}), ElementsAre(1));
  int32_t node = -1;
  EXPECT_EQ(rt->sequence_node(2, &node).code(), StatusCode::kNotFound);
  EXPECT_EQ(rt->sequence_node(9, nullptr).code(), StatusCode::kInvalidArgument);

  // A node with twice the threads takes twice the sequences (finish time = load / threads).
  o.threads = 3;
  const auto uneven = create(o, synthetic("pack:2 numa:1 core:2 pu:1"));
  ASSERT_THAT(threads_of(*uneven), ElementsAre(2, 1));
  EXPECT_THAT(add(*uneven, {1, 2, 3, 4, 5, 6}), ElementsAre(0, 0, 1, 0, 0, 1));
}

TEST(RuntimeNuma, GpuLocalityFromThePciBusId) {
  // 2 nodes of 2 cores; the GPU hangs off node 1.
  const Machine xml = from_xml(kGpuXml, "0000:65:00.0");
  Options o = model();
  struct Case {
    NumaPlacement mode;
    std::vector<int32_t> want;
  };
  const Case cases[] = {
      {NumaPlacement::kGpuLocal, {1, 1, 1, 1}},
      {NumaPlacement::kBalanced, {0, 1, 0, 1}},
      // The GPU's node while it finishes within 25 % of the best: ties go to it, 2 vs 1 does not.
      {NumaPlacement::kAuto, {1, 0, 1, 0}},
  };
  for (const Case& c : cases) {
    o.numa_placement = c.mode;
    const auto rt = create(o, xml);
    ASSERT_TRUE(rt);
    const CpuStats st = cpu_stats(*rt);
    ASSERT_EQ(st.nodes.size(), 2u);
    EXPECT_FALSE(st.nodes[0].gpu_local);
    EXPECT_TRUE(st.nodes[1].gpu_local);
    EXPECT_EQ(add(*rt, {1, 2, 3, 4}), c.want) << to_string(c.mode);
  }
  // Auto keeps a heavier GPU node as long as the cost stays within 25 %; balanced does not.
  for (NumaPlacement mode : {NumaPlacement::kAuto, NumaPlacement::kBalanced}) {
    o.numa_placement = mode;
    const auto rt = create(o, xml);
    ASSERT_TRUE(rt);
    EXPECT_THAT(add(*rt, {1, 2}), ElementsAre(mode == NumaPlacement::kAuto ? 1 : 0, mode == NumaPlacement::kAuto ? 0 : 1));
    // Node loads become 9 (node 0) and 11 (node 1), whichever got which sequence.
    const bool first_on_gpu_node = mode == NumaPlacement::kAuto;
    grow(*rt, {1, 2}, {first_on_gpu_node ? 10 : 8, first_on_gpu_node ? 8 : 10});
    // Finish times with one more: node 0 (9 + 1) / 2 = 5, node 1 (11 + 1) / 2 = 6 ≤ 1.25 × 5.
    EXPECT_THAT(add(*rt, {3}), ElementsAre(mode == NumaPlacement::kAuto ? 1 : 0)) << to_string(mode);
  }
  // Fewer threads than nodes: the GPU's node gets the thread (node 0 got it, and the GPU's node none).
  o.threads = 1;
  o.numa_placement = NumaPlacement::kAuto;
  const auto one = create(o, xml);
  ASSERT_TRUE(one);
  EXPECT_THAT(threads_of(*one), ElementsAre(0, 1));
  EXPECT_THAT(add(*one, {1, 2}), ElementsAre(1, 1));
  o.threads = 0;
  // A GPU hwloc does not see: no node is preferred, and every mode balances.
  o.numa_placement = NumaPlacement::kGpuLocal;
  const auto blind = create(o, from_xml(kGpuXml, "0000:17:00.0"));
  ASSERT_TRUE(blind);
  for (const NumaNodeStats& n : cpu_stats(*blind).nodes) EXPECT_FALSE(n.gpu_local);
  EXPECT_THAT(add(*blind, {1, 2, 3}), ElementsAre(0, 1, 0));
  // The host backend has no GPU of its own: without a bus id, nothing is GPU-local.
  const auto host = create(o, from_xml(kGpuXml, ""));
  ASSERT_TRUE(host);
  for (const NumaNodeStats& n : cpu_stats(*host).nodes) EXPECT_FALSE(n.gpu_local);
}

TEST(RuntimeNuma, ForcedIsaTheCpuLacksIsRefusedAtCreate) {
  Machine m = synthetic("pack:1 numa:1 core:2 pu:1");
  m.isas = {CpuIsa::kAvx2, CpuIsa::kPortable};  // a CPU without AVX-512
  Options o = model();
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx512Bf16}) {
    o.isa = isa;
    std::unique_ptr<Runtime> rt;
    const Status s = create_runtime(o, m, &rt);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(std::string("isa = ") + to_string(isa)));
    EXPECT_THAT(s.message(), HasSubstr("auto, avx2, portable"));
    EXPECT_FALSE(rt);
  }
  o.isa = CpuIsa::kPortable;
  const auto rt = create(o, m);
  ASSERT_TRUE(rt);
  EXPECT_EQ(cpu_stats(*rt).isa, CpuIsa::kPortable);

  // On this machine through Runtime::create: every path the CPU has runs as asked, auto runs the
  // best, and any other is refused.
  const std::vector<CpuIsa> has = cpu::supported_isas();
  for (CpuIsa isa : {CpuIsa::kAuto, CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16}) {
    o.isa = isa;
    std::unique_ptr<Runtime> here;
    const Status s = Runtime::create(o, &here);
    if (isa == CpuIsa::kAuto || std::find(has.begin(), has.end(), isa) != has.end()) {
      ASSERT_TRUE(s.is_ok()) << to_string(isa) << ": " << s.message();
      EXPECT_EQ(cpu_stats(*here).isa, isa == CpuIsa::kAuto ? has.front() : isa);
    } else {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << to_string(isa);
      EXPECT_THAT(s.message(), HasSubstr(std::string("isa = ") + to_string(isa)));
    }
  }
}

/// A file in the temporary directory, unique to the running test; removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             (std::string("hgca_numa_") + test->test_suite_name() + "_" + test->name() + ".json"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What hgca-tune writes (its own writer) is what a runtime then runs with.
TEST(RuntimeNuma, TunedJsonIsWhatTheRuntimeRuns) {
  Options tuned;
  tuned.threads = 3;
  tuned.threads_per_node = 2;
  tuned.kv_split_tokens = 512;
  tuned.max_packed_heads = 2;
  tuned.isa = CpuIsa::kPortable;
  tuned.numa_placement = NumaPlacement::kBalanced;
  const TempFile file(tune::tuned_options_json(tuned, {{"tool", "hgca-tune"}}).dump(2));

  Options o = model();
  ASSERT_TRUE(load_options_json(file.path(), &o).is_ok());
  const auto rt = create(o, from_xml(kGpuXml, "0000:65:00.0"));
  ASSERT_TRUE(rt);
  const CpuStats st = cpu_stats(*rt);
  EXPECT_EQ(st.isa, CpuIsa::kPortable);
  EXPECT_EQ(st.kv_split_tokens, 512);
  EXPECT_EQ(st.max_packed_heads, 2);
  EXPECT_THAT(threads_of(*rt), ElementsAre(1, 2));  // 2 per node, 3 in all: the tie to the GPU's node 1
  // Balanced over nodes of 1 and 2 threads: (0 + 1) / 2, then a tie at 1 (the lower node), then
  // node 1. Auto would have taken that tie to the GPU's node 1.
  EXPECT_THAT(add(*rt, {1, 2, 3}), ElementsAre(1, 0, 1));

  // The same file through HGCA_CONFIG on this machine.
  setenv("HGCA_CONFIG", file.path().c_str(), 1);
  std::unique_ptr<Runtime> here;
  const Status s = Runtime::create(model(), &here);
  unsetenv("HGCA_CONFIG");
  ASSERT_TRUE(s.is_ok()) << s.message();
  const CpuStats hs = cpu_stats(*here);
  EXPECT_EQ(hs.isa, CpuIsa::kPortable);
  EXPECT_EQ(hs.kv_split_tokens, 512);
  EXPECT_EQ(hs.max_packed_heads, 2);
  int32_t threads = 0;
  for (const NumaNodeStats& n : hs.nodes) {
    EXPECT_LE(n.threads, 2);
    threads += n.threads;
  }
  EXPECT_EQ(threads, std::min<int32_t>(2 * static_cast<int32_t>(hs.nodes.size()), 3));
}

// Where a sequence runs, on how many threads, and how the engine packs its work change nothing:
// every configuration returns the same bits, and those are exact attention (beta = 0). The
// re-evaluations run asynchronously in the sequences' node arenas and are published by
// synchronize() after each step, so that every runtime sees them at the same call.
TEST(RuntimeNuma, ResultsAreTheSameBitsOnEveryNodeLayoutAndThreadCount) {
  Options base = model();
  base.n_layers = 2;
  base.n_q_heads = 8;
  base.head_dim = 32;
  base.dtype = DType::kBFloat16;
  base.beta = 0.0f;
  base.min_keep = 0;
  base.reeval_min_tokens = 5;
  base.kv_split_tokens = 8;  // context sets split into chunks, merged by LSE on their node
  struct Config {
    const char* name;
    Machine machine;
    int32_t threads, threads_per_node, max_packed_heads;
    NumaPlacement placement;
  };
  const std::vector<Config> configs = {
      {"this machine, 1 thread", this_machine(), 1, 0, 0, NumaPlacement::kAuto},
      {"this machine, 2 threads", this_machine(), 2, 0, 0, NumaPlacement::kAuto},
      {"this machine, every core", this_machine(), 0, 0, 0, NumaPlacement::kAuto},
      {"2 nodes x 1 thread", synthetic("pack:2 numa:1 core:1 pu:1"), 0, 0, 0, NumaPlacement::kBalanced},
      {"4 nodes x 1 thread, one head per task", synthetic("pack:4 numa:1 core:2 pu:1"), 0, 1, 1,
       NumaPlacement::kBalanced},
      {"2 nodes, all on the GPU's", from_xml(kGpuXml, "0000:65:00.0"), 0, 0, 3, NumaPlacement::kGpuLocal},
  };
  std::vector<std::unique_ptr<Runtime>> rts;
  for (const Config& c : configs) {
    Options o = base;
    o.threads = c.threads;
    o.threads_per_node = c.threads_per_node;
    o.max_packed_heads = c.max_packed_heads;
    o.numa_placement = c.placement;
    rts.push_back(create(o, c.machine));
    ASSERT_TRUE(rts.back()) << c.name;
  }
  const std::vector<SeqId> ids{11, 12, 13};
  for (auto& rt : rts) add(*rt, ids);
  int32_t node = -1;
  ASSERT_TRUE(rts[4]->sequence_node(13, &node).is_ok());
  EXPECT_EQ(node, 2);  // the sequences really are spread

  const int32_t hq = base.n_q_heads, hkv = base.n_kv_heads, d = base.head_dim;
  const DType dt = base.dtype;
  const double sm_scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::vector<double>>> k_hist(ids.size(), std::vector<std::vector<double>>(2)), v_hist = k_hist;
  const std::vector<std::vector<int32_t>> plan = {{13, 3, 9}, {1, 1, 1}, {6, 1, 2}, {1, 7, 1}, {1, 1, 1},
                                                  {5, 5, 5}, {1, 1, 1}, {2, 1, 6}, {1, 1, 1}};
  for (std::size_t step = 0; step < plan.size(); ++step) {
    const std::vector<int32_t>& n_new = plan[step];
    const int64_t t = std::accumulate(n_new.begin(), n_new.end(), int64_t{0});
    for (auto& rt : rts) ASSERT_TRUE(rt->begin_step(ids, n_new).is_ok());
    for (int32_t l = 0; l < base.n_layers; ++l) {
      const auto q = ref::round_to(ref::normal(rng, static_cast<std::size_t>(t * hq * d), 1.5), dt);
      const auto k = ref::round_to(ref::normal(rng, static_cast<std::size_t>(t * hkv * d), 1.5), dt);
      const auto v = ref::round_to(ref::normal(rng, static_cast<std::size_t>(t * hkv * d)), dt);
      const auto qb = ref::encode(q, dt), kb = ref::encode(k, dt), vb = ref::encode(v, dt);
      std::vector<std::byte> first;
      std::vector<float> first_lse;
      for (std::size_t r = 0; r < rts.size(); ++r) {
        std::vector<std::byte> out(qb.size(), std::byte{0x7F});
        std::vector<float> lse(static_cast<std::size_t>(t * hq), std::nanf(""));
        const Status s = rts[r]->attention(l, {qb.data(), dt, {t, hq, d}}, {kb.data(), dt, {t, hkv, d}},
                                           {vb.data(), dt, {t, hkv, d}}, {out.data(), dt, {t, hq, d}}, lse.data());
        ASSERT_TRUE(s.is_ok()) << configs[r].name << ": " << s.message();
        if (r == 0) {
          first = std::move(out);
          first_lse = std::move(lse);
          continue;
        }
        EXPECT_EQ(out, first) << configs[r].name << ", step " << step << ", layer " << l;
        EXPECT_EQ(0, std::memcmp(lse.data(), first_lse.data(), lse.size() * sizeof(float)))
            << configs[r].name << ", step " << step << ", layer " << l;
      }
      // The first runtime against the fp64 reference over each sequence's whole history.
      const std::vector<double> got = ref::decode(first, dt);
      int64_t row = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const int64_t n = n_new[i];
        auto& kh = k_hist[i][static_cast<std::size_t>(l)];
        auto& vh = v_hist[i][static_cast<std::size_t>(l)];
        kh.insert(kh.end(), k.begin() + row * hkv * d, k.begin() + (row + n) * hkv * d);
        vh.insert(vh.end(), v.begin() + row * hkv * d, v.begin() + (row + n) * hkv * d);
        const std::vector<double> qs(q.begin() + row * hq * d, q.begin() + (row + n) * hq * d);
        std::vector<double> want, want_lse;
        ref::attention(qs, n, kh, vh, static_cast<int64_t>(kh.size()) / (hkv * d), hq, hkv, d, sm_scale, want, want_lse);
        const std::vector<double> mine(got.begin() + row * hq * d, got.begin() + (row + n) * hq * d);
        EXPECT_LE(ref::relative_error(mine, want), 4e-3) << "step " << step << ", layer " << l << ", seq " << ids[i];
        row += n;
      }
    }
    for (auto& rt : rts) {
      ASSERT_TRUE(rt->end_step().is_ok());
      ASSERT_TRUE(rt->synchronize().is_ok());
    }
  }
  // The run went through the store, split context sets and re-evaluations on every runtime.
  for (std::size_t r = 0; r < rts.size(); ++r) {
    LayerStats st;
    ASSERT_TRUE(rts[r]->layer_stats(1, &st).is_ok());
    EXPECT_GT(st.store_tokens, 3 * 16) << configs[r].name;
    EXPECT_GT(st.reevaluations, 0) << configs[r].name;
  }
}

}  // namespace
}  // namespace hgca
