// NUMA placement decisions (pure functions; see placement.hpp).
#include "cpu/placement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace hgca::cpu {

std::vector<int> split_threads(std::span<const int> cores, std::span<const int> hw_threads,
                               int total_threads, int threads_per_node, std::span<const int> preferred) {
  const std::size_t n = cores.size();
  std::vector<int> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int cap = std::max(i < hw_threads.size() ? hw_threads[i] : cores[i], 0);
    want[i] = std::min(threads_per_node > 0 ? threads_per_node : std::max(cores[i], 0), cap);
  }
  const int64_t sum = std::accumulate(want.begin(), want.end(), int64_t{0});
  if (total_threads <= 0 || sum <= total_threads) return want;

  // Share total_threads in proportion to want (largest remainder), so that each node keeps its
  // share of the machine.
  std::vector<int> got(n);
  std::vector<std::pair<int64_t, std::size_t>> remainder;  // (remainder × sum, node)
  int64_t given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t exact = int64_t{want[i]} * total_threads;
    got[i] = static_cast<int>(exact / sum);
    given += got[i];
    remainder.emplace_back(exact % sum, i);
  }
  const auto is_preferred = [&](std::size_t i) {
    return std::find(preferred.begin(), preferred.end(), static_cast<int>(i)) != preferred.end();
  };
  std::stable_sort(remainder.begin(), remainder.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : is_preferred(a.second) && !is_preferred(b.second);
  });
  for (std::size_t k = 0; given < total_threads && k < remainder.size(); ++k) {
    const std::size_t i = remainder[k].second;
    if (got[i] < want[i]) {
      ++got[i];
      ++given;
    }
  }
  return got;
}

int choose_node(std::span<const double> node_load, std::span<const int> node_threads,
                std::span<const int> gpu_local, double load, NumaPlacement mode, double gpu_slack) {
  const int n = static_cast<int>(std::min(node_load.size(), node_threads.size()));
  const auto finish = [&](int i) { return (node_load[i] + load) / node_threads[i]; };
  const auto is_local = [&](int i) { return std::find(gpu_local.begin(), gpu_local.end(), i) != gpu_local.end(); };
  // Best node among those `accept` lets through; -1 when none has a thread.
  const auto best_of = [&](auto accept) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (node_threads[i] <= 0 || !accept(i)) continue;
      if (best < 0 || finish(i) < finish(best)) best = i;
    }
    return best;
  };
  const int best = best_of([](int) { return true; });
  if (best < 0 || gpu_local.empty() || mode == NumaPlacement::kBalanced) return best;
  const int local = best_of(is_local);
  if (local < 0) return best;  // the GPU's nodes have no threads
  if (mode == NumaPlacement::kGpuLocal) return local;
  return finish(local) <= finish(best) * (1.0 + gpu_slack) ? local : best;
}

std::vector<int> assign_sequences(std::span<const double> seq_loads, std::span<const int> node_threads,
                                  std::span<const int> gpu_local, NumaPlacement mode, double gpu_slack) {
  std::vector<std::size_t> order(seq_loads.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return seq_loads[a] > seq_loads[b]; });
  std::vector<double> node_load(node_threads.size(), 0.0);
  std::vector<int> node_of(seq_loads.size(), -1);
  for (const std::size_t s : order) {
    const int node = choose_node(node_load, node_threads, gpu_local, seq_loads[s], mode, gpu_slack);
    node_of[s] = node;
    if (node >= 0) node_load[static_cast<std::size_t>(node)] += seq_loads[s];
  }
  return node_of;
}

std::string numa_binding_warning(int hwloc_nodes, std::span<const int> tbb_numa_nodes) {
  if (hwloc_nodes <= 1) return {};  // one node: nothing to confine
  const bool unbound = tbb_numa_nodes.size() == 1 && tbb_numa_nodes[0] < 0;
  if (!unbound && static_cast<int>(tbb_numa_nodes.size()) >= hwloc_nodes) return {};
  return fmt::format(
      "hgca: oneTBB sees {} NUMA node(s) [{}] but hwloc sees {}: oneTBB's hwloc binding (libtbbbind) "
      "did not load, so arenas are not confined to their nodes by oneTBB; hgca binds each arena's "
      "workers to its node through hwloc instead. Install oneTBB's tbbbind (Debian: libtbbbind-2-5) "
      "next to libtbb to silence this.",
      tbb_numa_nodes.size(), fmt::join(tbb_numa_nodes, ", "), hwloc_nodes);
}

}  // namespace hgca::cpu
