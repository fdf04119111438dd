// Session 31: the store scatter of hgca_bench_transfer's D2H steps alone, on the CPU (no copies):
// fresh stores (made anew each round), steady stores (grown to 2 GB first) and fresh stores on the
// steady stores' allocator, in turn; GB/s per round and per quarter of a run, step times, and (with
// a library built with instrument-store*.patch) each phase's thread time. Args: threads, steps per
// run, rounds, store writes (auto|cached|streamed), layers (steps round-robin over layers x 32 sequences).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>
#include <algorithm>
#include "cpu/pool.hpp"
#include "kvmgr/store.hpp"
#include "kvmgr/store_memory.hpp"
using namespace hgca;
extern "C" void hgca_instr_take(long long* out);
extern "C" void hgca_instr2_take(long long* out);
double alloc_s = 0;
constexpr int32_t kHkv = 8, kD = 128, kSeqs = 32;
constexpr std::size_t kHeadRow = kD * 2, kRow = kHkv * kHeadRow;
int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int steps = argc > 2 ? atoi(argv[2]) : 32;
  int rounds = argc > 3 ? atoi(argv[3]) : 4;
  const char* writes = argc > 4 ? argv[4] : "auto";
  const int layers = argc > 5 ? atoi(argv[5]) : 1;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
  std::shared_ptr<const cpu::Topology> topo;
  if (!cpu::Topology::from_machine(&topo)) return 1;
  auto mk = [&](int hw) {
    kvmgr::StoreMemoryOptions o; o.high_water_chunks = hw;
    o.writes = !strcmp(writes, "streamed") ? StoreWrites::kStreamed : !strcmp(writes, "cached") ? StoreWrites::kCached : StoreWrites::kAuto;
    std::shared_ptr<kvmgr::StoreMemory> m; if (!kvmgr::StoreMemory::create(topo, o, &m)) abort(); return m; };
  auto fresh_mem = mk(400), steady_mem = mk(800);
  auto warm = [](std::shared_ptr<kvmgr::StoreMemory> m, int n) {
    std::vector<kvmgr::StoreSpan> spans(n);
    m->allocate(0, m->options().chunk_bytes / 2, spans);
    for (auto& s : spans) memset(s.data(), 0, s.bytes());
  };
  warm(fresh_mem, 150); warm(steady_mem, 600);
  const int32_t bt = 64;
  const std::size_t step_bytes = (std::size_t)kSeqs * bt * kRow;
  std::vector<std::byte> staging(2 * step_bytes);
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i + 8 <= staging.size(); i += 8) { uint64_t x = rng(); memcpy(staging.data() + i, &x, 8); }
  const kvmgr::SelectionParams sel{1.0f, 4, 1};
  const float threshold = 1.0f / (5.0f * bt);
  std::vector<float> maw((std::size_t)kHkv * bt);
  for (float& m : maw) m = std::uniform_real_distribution<float>(0.0f, threshold / 0.9f)(rng);
  const std::vector<std::byte> prompt((std::size_t)4 * bt * kRow, std::byte{1});
  std::vector<std::unique_ptr<kvmgr::MirroredKv>> steady;
  auto make = [&](std::vector<std::unique_ptr<kvmgr::MirroredKv>>& seqs, std::shared_ptr<kvmgr::StoreMemory> m) {
    seqs.clear();
    for (int i = 0; i < layers * kSeqs; ++i) {
      seqs.push_back(std::make_unique<kvmgr::MirroredKv>(4 * bt, bt, kHkv, kD, 2, m, 0));
      seqs.back()->evict_and_insert(prompt.data(), prompt.data(), 4 * bt, nullptr, sel);
    }
  };
  auto run = [&](std::vector<std::unique_ptr<kvmgr::MirroredKv>>& seqs, std::vector<double>& per_step) {
    per_step.clear();
    for (int s = 0; s < steps; ++s) {
      std::vector<kvmgr::DramStore::PreparedAppend> ahead;
      auto a0 = std::chrono::steady_clock::now();
      const int off = s % layers * kSeqs;
      for (int i = 0; i < kSeqs; ++i) ahead.push_back(seqs[off + i]->allocate_blocks(4 * bt, bt));
      alloc_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
      auto t0 = std::chrono::steady_clock::now();
      tbb::parallel_for(0, kSeqs, [&](int32_t i) {
        const std::size_t row = (std::size_t)i * bt * kRow;
        seqs[off + i]->evict_and_insert(staging.data() + row, staging.data() + step_bytes + row, bt, maw.data(), sel, std::move(ahead[i]));
      });
      per_step.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  };
  make(steady, steady_mem);
  std::vector<double> ps;
  // grow steady stores to ~2 GB first
  for (int i = 0; i < 2048 * 1024 / (2 * (int)(step_bytes >> 10)) / steps; ++i) run(steady, ps);
  std::vector<std::unique_ptr<kvmgr::MirroredKv>> fresh;
  std::vector<std::unique_ptr<kvmgr::MirroredKv>> fresh2;
  for (int r = 0; r < rounds; ++r) {
    for (int kind = 0; kind < 3; ++kind) {
      if (kind == 0) make(fresh, fresh_mem);
      if (kind == 2) make(fresh2, steady_mem);
      { long long junk[8]; hgca_instr_take(junk); hgca_instr2_take(junk); alloc_s = 0; }
      run(kind == 0 ? fresh : kind == 1 ? steady : fresh2, ps);
      double tot = 0; for (double x : ps) tot += x;
      double q1 = 0, q4 = 0; int n4 = steps / 4;
      for (int i = 0; i < n4; ++i) { q1 += ps[i]; q4 += ps[steps - 1 - i]; }
      printf("%s round %d: %.2f GB/s  first quarter %.2f  last quarter %.2f  streamed=%d\n", kind == 1 ? "steady" : kind == 0 ? "fresh " : "fresh-on-steady-mem", r,
             2.0 * step_bytes * steps / tot / 1e9, 2.0 * step_bytes * n4 / q1 / 1e9, 2.0 * step_bytes * n4 / q4 / 1e9,
             (kind ? steady_mem : fresh_mem)->streams_rows());
      { long long t[8]; hgca_instr_take(t);
        printf("   thread-ms: entry_room %.1f reserve %.1f copy_rows %.1f append %.1f (admit %.1f sync-reserve %.1f sync-copy %.1f) window %.1f | alloc (1 thread) %.1f\n",
               t[0]/1e6, t[1]/1e6, t[2]/1e6, t[3]/1e6, t[4]/1e6, t[5]/1e6, t[6]/1e6, t[7]/1e6, alloc_s*1e3); }
      { long long a[4]; hgca_instr2_take(a);
        printf("   allocator: %lld calls, %.1f thread-ms in allocate (%.1f waiting for the lock), %lld spare chunks taken\n", a[0], a[1]/1e6, a[2]/1e6, a[3]); }
      std::vector<double> sorted = ps; std::sort(sorted.begin(), sorted.end());
      printf("   step us: min %.0f p25 %.0f median %.0f p75 %.0f max %.0f\n", sorted[0]*1e6, sorted[steps/4]*1e6, sorted[steps/2]*1e6, sorted[3*steps/4]*1e6, sorted.back()*1e6);
    }
  }
}
