// DRAM read bandwidth with the engine's pool (see bandwidth.hpp).
#include "bandwidth.hpp"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace hgca::tune {
namespace {

// Several accumulators hide the add latency so that one thread reads as fast as its core can; the
// clones give AVX-512 / AVX2 loads where the CPU has them (the binary is built for baseline x86-64).
__attribute__((target_clones("avx512f", "avx2", "default"), noinline))
float sum_floats(const float* p, std::size_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (std::size_t i = 0; i < n; ++i) s += p[i];
  return s;
}

std::atomic<float> sink{0.0f};  // keeps the reads from being optimized away

}  // namespace

void run_on_every_node(cpu::Pool& pool, const std::function<void(int)>& body) {
  std::vector<int> nodes;
  for (int node = 0; node < pool.node_count(); ++node) {
    if (pool.threads(node) > 0) nodes.push_back(node);
  }
  if (nodes.size() == 1) {  // no helper thread needed
    pool.execute(nodes[0], [&] { body(nodes[0]); });
    return;
  }
  std::vector<std::thread> threads;
  for (int node : nodes) threads.emplace_back([&pool, &body, node] { pool.execute(node, [&] { body(node); }); });
  for (auto& t : threads) t.join();
}

DramBuffers::DramBuffers(std::shared_ptr<const cpu::Topology> topology, uint64_t bytes_per_node)
    : topology_(std::move(topology)), bytes_(bytes_per_node / 4096 * 4096) {
  for (int node = 0; node < topology_->node_count(); ++node) {
    bool bound = false;
    auto* p = static_cast<float*>(cpu::node_alloc(*topology_, node, bytes_, &bound));
    if (!p) throw std::bad_alloc();
    bound_ = bound_ && bound;
    buffers_.push_back(p);
  }
}

DramBuffers::~DramBuffers() {
  for (float* p : buffers_) cpu::node_free(p, bytes_);
}

void DramBuffers::fill(cpu::Pool& pool) {
  const std::size_t n = bytes_ / sizeof(float);
  run_on_every_node(pool, [&](int node) {
    float* p = buffers_[static_cast<std::size_t>(node)];
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const auto& r) {
      for (std::size_t i = r.begin(); i < r.end(); ++i) p[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    });
  });
}

DramResult DramBuffers::measure(cpu::Pool& pool, int repeats, double min_seconds) {
  const std::size_t n = bytes_ / sizeof(float);
  std::vector<DramResult> runs;
  double seconds = 0;
  for (int rep = 0; rep < std::max(repeats, 1) || seconds < min_seconds; ++rep) {
    DramResult r;
    r.node_gbps.assign(static_cast<std::size_t>(pool.node_count()), 0.0);
    const auto start = std::chrono::steady_clock::now();
    run_on_every_node(pool, [&](int node) {
      const float* p = buffers_[static_cast<std::size_t>(node)];
      // A few chunks per thread, statically spread, so every thread streams its own part.
      const std::size_t chunks = static_cast<std::size_t>(pool.threads(node)) * 4;
      const auto t0 = std::chrono::steady_clock::now();
      tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t c) {
        const std::size_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
        const float s = sum_floats(p + lo, hi - lo);
        if (s == -1.0f) sink.store(s, std::memory_order_relaxed);
      }, tbb::static_partitioner());
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r.node_gbps[static_cast<std::size_t>(node)] = static_cast<double>(bytes_) / dt * 1e-9;
    });
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds += dt;
    int active = 0;
    for (int node = 0; node < pool.node_count(); ++node) active += pool.threads(node) > 0 ? 1 : 0;
    r.gbps = static_cast<double>(bytes_) * active / dt * 1e-9;
    runs.push_back(std::move(r));
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.gbps < b.gbps; });
  return runs[runs.size() / 2];
}

}  // namespace hgca::tune
