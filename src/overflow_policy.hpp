// The overflow policy's cost model (issue 5, item 3): which items of a step — (sequence, KV head)
// context sets — the GPU attends (gpu/sparse_attention.hpp, reading them in place from the store
// memory over the link, FlashH2D's mechanism) instead of the CPU, so that the step's critical path is
// shortest. It covers (a) appends and prefills with many query rows, whose CPU cost grows with the
// rows (the GPU's too: it reads an item once per tile of 8 (row, head) pairs), and (b) decode steps
// whose CPU share exceeds the GPU's window. Pure host code over measured rates, which the runtime
// owns.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca {

/// The measured rates the cost model works from. Defaults are DESIGN.md's hardware table (the GPU
/// machine, 2026-11-21) where it has the figure, else the committed benchmark named; a start-up
/// probe or hgca-tune's JSON is meant to replace them with the machine's own.
struct OverflowRates {
  /// CPU engine, decode: GB/s of selected K+V (DESIGN.md: CPU SDPA over an already-selected subset,
  /// bf16, 16 threads; hgca-tune's "engine_gbps" measures this engine itself: 102.8 there).
  double cpu_gbps = 98.0;
  /// CPU engine, appends: GB/s of K+V times query rows once compute-bound, so an item of b bytes
  /// and r rows takes at least b·r / cpu_row_gbps. A figure at G = 4 and 2-byte K/V (overflow_rates
  /// scales it to the runtime's shape: the flops per key and row grow with G): bench/results/cpu-engine
  /// measured 1233 GFLOP/s at G = 4, D = 128, bf16, i.e. 4·D·G flops per key and row over 4·D bytes
  /// of K+V: 1233 / 4.
  double cpu_row_gbps = 308.0;
  /// GB/s over PCIe of the GPU path's reads of host memory (DESIGN.md: one UVA gather kernel, 8 SMs,
  /// 16 KB blocks; the sparse kernel reading context caches in place: 51.1, session 48 call 7).
  double h2d_gbps = 51.3;
  /// GPU sparse attention, decode: GB/s of K+V read (DESIGN.md: PyTorch SDPA decode, long KV, the
  /// low end; bench_gpu_sparse measures this kernel).
  double gpu_gbps = 3800.0;
  /// GPU sparse attention, appends, as cpu_row_gbps (the window's generic path on fp32 CUDA cores,
  /// 3.3 TFLOP/s at G = 4, D = 128 in bench/results/gpu-window, until the sparse kernel's is measured).
  double gpu_row_gbps = 825.0;
  /// Fixed cost of the GPU path in a step that moves anything: the attend and combine launches and
  /// the second merge (an estimate).
  double gpu_fixed_s = 20e-6;
  /// Fixed cost of the CPU path in a step that leaves it anything: waking the pool, its tasks and
  /// their results reaching the merge. hgca-decode's default run on the GPU machine
  /// (bench/results/overflow-policy) was 19 µs per layer faster with every item moved than with none
  /// (tiny context sets, so the difference is fixed costs): cpu_fixed_s − gpu_fixed_s ≈ 19 µs.
  double cpu_fixed_s = 40e-6;
  /// The window's attention: GB/s of window K+V read, for the GPU's part with nothing moved
  /// (bench/results/gpu-window: 3.56–4.03 TB/s at the large decode shapes, the low end).
  double window_gbps = 3500.0;
  /// G, query heads per KV head (≥ 1): the GPU path reads a moved item in place from host memory
  /// once per tile of gpu::kMaxSparseTilePairs (row, head) pairs, so an append of r rows crosses the
  /// link ceil(r·G / 8) times (512 rows at G 4: 256 reads, 67 ms for 13.4 MB; session 48 call 7).
  int32_t group = 4;
};

/// Ok, or an error naming the first rate that is not finite and ≥ 0.001 GB/s (the fixed costs: ≥ 0;
/// group: ≥ 1).
Status check_overflow_rates(const OverflowRates& rates);

/// The rates Options name (Options::overflow_*_gbps; 0 keeps the default above), the row rates
/// (cpu_row_gbps, gpu_row_gbps: given or default, figures at G = 4 and 2-byte K/V) scaled to the
/// runtime's shape: a key's arithmetic per row grows with G, its bytes with the element size, so
/// a byte·row costs G/4 · 2/elem_size of what it costs there; group is the runtime's G.
OverflowRates overflow_rates(const Options& options);
/// Checks Options::overflow, overflow_margin and the overflow_*_gbps rates (0, or finite and ≥ 0.001);
/// validate_options calls it.
Status check_overflow_options(const Options& options);

/// One item of a step as the cost model sees it.
struct OverflowItem {
  int64_t kv_bytes = 0;  ///< selected K+V bytes: |S| · 2 · head_dim · element size
  int32_t rows = 1;      ///< query rows (the sequence's new tokens), ≥ 1
};

/// Seconds the CPU engine takes for `item`: its bytes at cpu_gbps, or at cpu_row_gbps per row once
/// the rows make it compute-bound (the larger).
double overflow_cpu_seconds(const OverflowItem& item, const OverflowRates& rates);
/// Seconds `item` adds to the GPU's part when moved: its reads over the link (once per tile of
/// pairs, see group) or its attention (as above with the GPU's rates), whichever is longer (the
/// kernel computes while it reads). The fixed cost of moving anything is not included.
double overflow_gpu_seconds(const OverflowItem& item, const OverflowRates& rates);

/// Seconds of the GPU's window attention for one call, `seqs` holding each sequence's window K+V
/// bytes (its entries and new rows) and new rows. Where the decode path serves the runtime's shape
/// (`decode_path`: gpu::window_decode_path_serves) a call of single-row sequences takes it,
/// memory-bound at window_gbps; any other call the generic path, whose arithmetic grows with the
/// rows (gpu_row_gbps, the generic path's rate): an append of 512 rows over 4096 entries took 10 ms
/// on the H200 (bench/results/gpu-window), which window_gbps alone priced at 5 µs.
double overflow_window_seconds(std::span<const OverflowItem> seqs, const OverflowRates& rates, bool decode_path);

/// One step's decision and its explanation (for the statistics).
struct OverflowPlan {
  std::vector<int32_t> gpu_items;  ///< items the GPU attends, ascending indices
  int64_t bytes_moved = 0;         ///< their K+V bytes (read over the link once per tile of pairs)
  int64_t rows_moved = 0;          ///< their query rows
  double cpu_s = 0.0;              ///< predicted: the CPU's part (cpu_fixed_s + the items left on it, if any)
  /// predicted: the GPU's part (window, plus fixed + Σ overflow_gpu_seconds if anything moves)
  double gpu_s = 0.0;
  double cpu_alone_s = 0.0;        ///< predicted: the CPU's part with nothing moved
  double window_s = 0.0;           ///< the GPU's part with nothing moved (the caller's estimate)
  double critical_s() const { return cpu_s > gpu_s ? cpu_s : gpu_s; }
  double critical_alone_s() const { return cpu_alone_s > window_s ? cpu_alone_s : window_s; }
};

/// Decides which items of a step to move to the GPU. The step's critical path is the larger of the
/// CPU's part (when it keeps any non-empty item, cpu_fixed_s and Σ CPU seconds of the items it
/// keeps) and the GPU's (the window's `window_s`, plus, when anything moves, gpu_fixed_s and Σ GPU
/// seconds of the moved items). Items are taken greedily in order of CPU seconds over GPU seconds
/// (then larger first), each while it shortens the critical path; moving every non-empty item is
/// the other candidate (it saves the CPU's fixed cost, which no single item does). The better one
/// is kept only when it beats moving nothing by `margin` (a fraction in [0, 1)), so the predicted
/// critical path is never worse than moving nothing. With margin 0 it is within the largest item's
/// CPU seconds plus cpu_fixed_s of the best choice of items (in that order an exact, fractional
/// split would move them).
/// Errors (kInvalidArgument, *out untouched): a negative or non-finite window_s, margin outside
/// [0, 1), bad rates, an item with kv_bytes < 0 or rows < 1.
Status plan_overflow(std::span<const OverflowItem> items, double window_s, const OverflowRates& rates,
                     double margin, OverflowPlan* out);
/// OverflowMode::kAlways: every non-empty item moves, whatever it costs (tests, benchmarks); the
/// predictions are filled as plan_overflow fills them. Errors as plan_overflow's.
Status plan_overflow_all(std::span<const OverflowItem> items, double window_s, const OverflowRates& rates,
                         OverflowPlan* out);

}  // namespace hgca
