// NUMA placement decisions as pure functions of node sizes and loads, so that they are testable on
// a one-node machine: threads per node, and which node each sequence's store and CPU work go to.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca::cpu {

/// Worker threads per node. `hw_threads[i]` is node i's hardware threads (its cap) and
/// `cores[i]` its cores (the default when nothing is asked). `threads_per_node` > 0 asks that many
/// on every node (capped at the node's hardware threads); `total_threads` > 0 caps the sum, shared
/// among the nodes in proportion to what each would get (largest remainder; on ties the nodes of
/// `preferred` first, e.g. the GPU's, then the lower node). A node may get 0 threads when
/// `total_threads` < the number of nodes.
std::vector<int> split_threads(std::span<const int> cores, std::span<const int> hw_threads,
                               int total_threads, int threads_per_node, std::span<const int> preferred = {});

/// The node for one more sequence of `load` (e.g. its selected tokens × KV heads), given each
/// node's current load and threads (nodes with 0 threads are never chosen). A node's finish time is
/// (load_i + load) / threads_i.
/// - kBalanced: the node with the earliest finish time (lowest index on ties).
/// - kAuto: a GPU-local node when its finish time is within (1 + gpu_slack) of the best node's, the
///   best node otherwise; the same as kBalanced when `gpu_local` is empty.
/// - kGpuLocal: the best of the GPU-local nodes (of all nodes when `gpu_local` is empty).
/// `gpu_local` lists node indices. Returns -1 when no node has a thread.
int choose_node(std::span<const double> node_load, std::span<const int> node_threads,
                std::span<const int> gpu_local, double load, NumaPlacement mode,
                double gpu_slack = 0.25);

/// Assigns a batch of sequences to nodes, heaviest first (LPT), each by choose_node; returns the
/// node of each sequence in the order given. `node_load` starts at zero.
std::vector<int> assign_sequences(std::span<const double> seq_loads, std::span<const int> node_threads,
                                  std::span<const int> gpu_local, NumaPlacement mode,
                                  double gpu_slack = 0.25);

/// The warning due when oneTBB's hwloc binding (tbbbind) did not load: oneTBB then reports one
/// node with id -1 (or fewer nodes than hwloc), and every arena would float over the whole machine.
/// Empty when oneTBB sees as many nodes as hwloc.
std::string numa_binding_warning(int hwloc_nodes, std::span<const int> tbb_numa_nodes);

}  // namespace hgca::cpu
