// Scheduling of the sparse attention: a step's items become tasks over (sequence, KV head, KV split)
// of about equal selected tokens — long context sets split into chunks merged exactly by LSE, small
// adjacent heads packed into one task (HGCA §3.3) — run on the caller's oneTBB arena(s).
#include "cpu/sparse_engine.hpp"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <new>

#include "cpu/arch/sparse_arch.hpp"
#include "cpu/pool.hpp"

namespace hgca::cpu {
namespace {

constexpr int64_t kLine = 64;  // bytes; partial buffers start on their own cache line
/// Auto split: aim at about this many tasks per step (enough for 16+ workers to balance within a
/// task's length), chunks no shorter than kMinSplit keys (a task then reads ≥ 128 KiB at D = 128).
constexpr int64_t kAutoTasks = 256;
constexpr int64_t kMinSplit = 512;
constexpr int64_t kMaxSplit = 16384;
/// A small item costs its keys plus about this many keys' worth of fixed work (queries, outputs).
constexpr int64_t kItemOverheadTokens = 16;
/// Query rows (rows × G) that share one read of a key: an item's work is its keys once per this
/// many of its queries (at 16 the kernel is compute-bound, so more queries cost more than the read).
constexpr int64_t kQueriesPerRead = 16;

/// The work of attending `n` keys with `nq` queries, in keys read once (see kQueriesPerRead).
int64_t work_tokens(int64_t n, int64_t nq) { return n * ((nq + kQueriesPerRead - 1) / kQueriesPerRead); }

arch::Kernels kernels_for(SparseIsa isa) {
  switch (isa) {
#if defined(HGCA_HAVE_AVX512_KERNELS)
    case SparseIsa::kAvx512: return arch::avx512_kernels();
#endif
#if defined(HGCA_HAVE_AVX512BF16_KERNELS)
    case SparseIsa::kAvx512Bf16: return arch::avx512bf16_kernels();
#endif
#if defined(HGCA_HAVE_AVX2_KERNELS)
    case SparseIsa::kAvx2: return arch::avx2_kernels();
#endif
    default: return arch::portable_kernels();
  }
}

/// Flushes denormals (FTZ, DAZ) while a task runs and restores the thread's mode afterwards: the
/// caller's own thread works in the arena too, and its floating-point mode is not ours to keep.
class DenormalsFlushed {
 public:
#if defined(__x86_64__) || defined(__i386__)
  DenormalsFlushed() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~DenormalsFlushed() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

/// A range of one item's keys that one kernel call attends: runs [first_run, first_run + runs) of
/// the call's list (one, or more where the range spans segments), n keys in all.
struct Chunk {
  int32_t first_run = 0;
  int32_t runs = 0;
  int64_t n = 0;
};

/// One piece of the schedule: either a run of whole items [first, first + count), or chunk `chunk`
/// (an index into the call's chunks) of the split item `first`.
struct Task {
  int32_t first = 0;
  int32_t count = 0;
  int32_t chunk = -1;  // ≥ 0: a chunk of a split item
  int32_t node = 0;
};

/// How an item is cut: chunks [first_chunk, first_chunk + chunks) of the call's list; more than one
/// (a set longer than the split) write their partial states to their own cache-line-aligned slots
/// of the call's partial buffer.
struct Split {
  int32_t first_chunk = 0;
  int32_t chunks = 0;
  int64_t partial_offset = 0;  // floats into the partial buffer
  int64_t partial_stride = 0;  // floats between chunks
};

struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(kLine)); }
};

}  // namespace

const char* to_string(SparseIsa isa) {
  switch (isa) {
    case SparseIsa::kAuto: return "auto";
    case SparseIsa::kAvx512: return "avx512";
    case SparseIsa::kAvx2: return "avx2";
    case SparseIsa::kAvx512Bf16: return "avx512bf16";
    case SparseIsa::kPortable: return "portable";
  }
  return "unknown";
}

bool isa_supported(SparseIsa isa) {
  switch (isa) {
    case SparseIsa::kAuto:
    case SparseIsa::kPortable: return true;
    case SparseIsa::kAvx512:
#if defined(HGCA_HAVE_AVX512_KERNELS)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
      return false;
#endif
    case SparseIsa::kAvx512Bf16:
#if defined(HGCA_HAVE_AVX512BF16_KERNELS)
      return isa_supported(SparseIsa::kAvx512) && __builtin_cpu_supports("avx512bf16");
#else
      return false;
#endif
    case SparseIsa::kAvx2:
#if defined(HGCA_HAVE_AVX2_KERNELS)
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
#else
      return false;
#endif
  }
  return false;
}

SparseIsa best_isa() {
  if (isa_supported(SparseIsa::kAvx512Bf16)) return SparseIsa::kAvx512Bf16;
  if (isa_supported(SparseIsa::kAvx512)) return SparseIsa::kAvx512;
  if (isa_supported(SparseIsa::kAvx2)) return SparseIsa::kAvx2;
  return SparseIsa::kPortable;
}

/// The kernels of `isa` (kAuto, or a path this CPU lacks: the best it has).
const arch::Kernels& kernels_of(SparseIsa isa) {
  static const arch::Kernels best = kernels_for(best_isa());
  static const arch::Kernels paths[] = {best, kernels_for(SparseIsa::kAvx512), kernels_for(SparseIsa::kAvx2),
                                        kernels_for(SparseIsa::kPortable), kernels_for(SparseIsa::kAvx512Bf16)};
  const auto i = static_cast<std::size_t>(isa);
  return i < std::size(paths) && isa_supported(isa) ? paths[i] : best;
}

void add_key_weights(SparseIsa isa, DType dtype, const arch::WeightsParams& p) {
  DenormalsFlushed ftz;
  kernels_of(isa).weights(dtype)(p);
}

void attend_unit(SparseIsa isa, DType dtype, const arch::UnitParams& p) {
  DenormalsFlushed ftz;
  kernels_of(isa).get(dtype)(p);
}

SparseIsa to_sparse_isa(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable: return SparseIsa::kPortable;
    case CpuIsa::kAvx2: return SparseIsa::kAvx2;
    case CpuIsa::kAvx512: return SparseIsa::kAvx512;
    case CpuIsa::kAvx512Bf16: return SparseIsa::kAvx512Bf16;
    case CpuIsa::kAuto: break;
  }
  return SparseIsa::kAuto;
}

CpuIsa to_cpu_isa(SparseIsa isa) {
  switch (isa) {
    case SparseIsa::kPortable: return CpuIsa::kPortable;
    case SparseIsa::kAvx2: return CpuIsa::kAvx2;
    case SparseIsa::kAvx512: return CpuIsa::kAvx512;
    case SparseIsa::kAvx512Bf16: return CpuIsa::kAvx512Bf16;
    case SparseIsa::kAuto: break;
  }
  return CpuIsa::kAuto;
}

std::vector<CpuIsa> supported_isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::kAvx512Bf16, CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kPortable}) {
    if (isa_supported(to_sparse_isa(isa))) out.push_back(isa);
  }
  return out;
}

SparseEngineConfig engine_config(const Options& o) {
  return {to_sparse_isa(o.isa), o.kv_split_tokens, o.max_packed_heads};
}

SparseEngine::SparseEngine(SparseEngineConfig config)
    : config_(config),
      isa_(config.isa == SparseIsa::kAuto || !isa_supported(config.isa) ? best_isa() : config.isa) {}

int64_t SparseEngine::split_tokens(int32_t group, std::span<const SparseItem> items) const {
  if (config_.kv_split_tokens > 0) return config_.kv_split_tokens;
  int64_t total = 0;
  for (const auto& it : items) total += work_tokens(it.n, static_cast<int64_t>(it.n_rows) * group);
  const int64_t want = (total + kAutoTasks - 1) / kAutoTasks;
  return std::clamp((want + 63) / 64 * 64, kMinSplit, kMaxSplit);
}

Status SparseEngine::attend(DType dtype, int32_t group, int32_t head_dim, float sm_scale,
                            std::span<const SparseItem> items, tbb::task_arena& arena,
                            SparseEngineStats* stats) const {
  tbb::task_arena* const arenas[] = {&arena};
  return attend(dtype, group, head_dim, sm_scale, items, arenas, stats);
}

Status SparseEngine::attend(DType dtype, int32_t group, int32_t head_dim, float sm_scale,
                            std::span<const SparseItem> items,
                            std::span<tbb::task_arena* const> arenas,
                            SparseEngineStats* stats) const {
  using enum StatusCode;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16 && dtype != DType::kBFloat16) {
    return {kInvalidArgument, fmt::format("dtype = {}, expected f32, f16 or bf16", static_cast<int>(dtype))};
  }
  if (group < 1) return {kInvalidArgument, fmt::format("group = {}, expected ≥ 1", group)};
  if (head_dim < 8 || head_dim > 256 || head_dim % 8 != 0) {
    return {kUnsupported, fmt::format("head_dim = {}, expected a multiple of 8 in [8, 256]", head_dim)};
  }
  if (arenas.empty()) return {kInvalidArgument, "arenas is empty, expected one per NUMA node"};
  for (size_t i = 0; i < items.size(); ++i) {
    const SparseItem& it = items[i];
    if (it.n < 0 || it.n_rows < 1 || it.node < 0 || it.node >= static_cast<int32_t>(arenas.size()) ||
        !it.q || !it.o || !it.lse || (it.n > 0 && (!it.k || !it.v)) || (it.segments && it.segment_rows <= 0)) {
      return {kInvalidArgument,
              fmt::format("items[{}]: n = {}, n_rows = {}, node = {}, segment_rows = {}, expected n ≥ 0, n_rows ≥ 1, "
                          "node in [0, {}), non-null q, o, lse (k, v when n > 0) and segment_rows > 0 with segments",
                          i, it.n, it.n_rows, it.node, it.segment_rows, arenas.size())};
    }
  }
  if (items.empty()) return Status::ok();

  const arch::UnitKernel kernel = kernels_for(isa_).get(dtype);
  const size_t elem = dtype_size(dtype);
  const int64_t split = split_tokens(group, items);

  // The schedule depends on the items and the config only, never on the thread count, so every
  // thread count computes the same chunks and merges them in the same order: identical results.
  //
  // An item whose work passes the split is cut into pieces: by query rows first (a block of rows
  // attends all keys and needs no partial state: partial buffers stay small however many rows an
  // append has), then each block by keys, while the item has fewer than kAutoTasks tasks (more
  // would not balance better, and a small split, e.g. one tuned for decode, would otherwise cut a
  // long append into rows × keys partial states). Every block of a cut item has more than
  // kMaxTile queries, as the whole item has, so the kernel takes the same path (and bits) for its
  // rows.
  std::vector<SparseItem> units;        // the items' row blocks
  std::vector<int64_t> unit_pieces;     // key chunks wanted per row block (at most)
  units.reserve(items.size());
  unit_pieces.reserve(items.size());
  for (const SparseItem& it : items) {
    const int64_t nq = static_cast<int64_t>(it.n_rows) * group;
    const int64_t work = work_tokens(it.n, nq);
    const int64_t pieces = work > split ? (work + split - 1) / split : 1;
    const int64_t blocks = std::clamp<int64_t>(nq / kQueriesPerRead, 1, std::min<int64_t>(pieces, it.n_rows));
    const int64_t key_pieces = (pieces + blocks - 1) / blocks;
    const int64_t chunks_per_block =
        blocks > 1 ? std::min(key_pieces, std::max<int64_t>(1, kAutoTasks / blocks)) : key_pieces;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t r0 = b * it.n_rows / blocks, r1 = (b + 1) * it.n_rows / blocks;
      SparseItem u = it;
      u.q = static_cast<const std::byte*>(it.q) + r0 * it.q_row_stride * static_cast<int64_t>(elem);
      u.n_rows = static_cast<int32_t>(r1 - r0);
      u.o = it.o + r0 * it.o_row_stride;
      u.lse = it.lse + r0 * it.lse_row_stride;
      units.push_back(u);
      unit_pieces.push_back(chunks_per_block);
    }
  }

  std::vector<Split> splits(units.size());
  std::vector<arch::KvRun> runs;
  std::vector<Chunk> chunks;
  std::vector<Task> tasks;
  int64_t partial_floats = 0;
  runs.reserve(units.size());  // at least one run and one chunk per unit
  chunks.reserve(units.size());
  {
    const auto row_bytes = static_cast<int64_t>(head_dim * elem);
    // Keys [k0, k1) of `it` as one chunk, its runs cut where a segment ends (an empty range: one
    // empty run).
    auto add_chunk = [&](const SparseItem& it, int64_t k0, int64_t k1) {
      Chunk ch{static_cast<int32_t>(runs.size()), 0, k1 - k0};
      do {
        const void* k = it.k;
        const void* v = it.v;
        int64_t first = 0, end = k1;
        if (it.segments && it.n > it.segment_rows) {
          const int32_t seg = kvmgr::context_segment_of(k0, it.segment_rows);
          k = it.segments[seg].k;
          v = it.segments[seg].v;
          first = kvmgr::context_segment_first(seg, it.segment_rows);
          end = std::min(k1, kvmgr::context_segment_end(seg, it.segment_rows));
        }
        runs.push_back({static_cast<const std::byte*>(k) + (k0 - first) * row_bytes,
                        static_cast<const std::byte*>(v) + (k0 - first) * row_bytes, end - k0});
        ++ch.runs;
        k0 = end;
      } while (k0 < k1);
      chunks.push_back(ch);
    };
    Task open;  // run of small items being packed
    int64_t open_cost = 0;
    auto close = [&] {
      if (open.count > 0) tasks.push_back(open);
      open = {};
      open_cost = 0;
    };
    for (int32_t i = 0; i < static_cast<int32_t>(units.size()); ++i) {
      const SparseItem& it = units[i];
      // A unit's keys are cut into chunks of about equal length (whole 16-key groups), wherever its
      // segments end; more than one chunk: a task each, else packed as a short set.
      Split& s = splits[i];
      s.first_chunk = static_cast<int32_t>(chunks.size());
      const int64_t pieces = unit_pieces[i];
      const int64_t size = pieces == 1 ? it.n : ((it.n + pieces - 1) / pieces + 15) / 16 * 16;
      int64_t k0 = 0;
      do {
        add_chunk(it, k0, std::min(it.n, k0 + size));
        k0 += size;
      } while (k0 < it.n);
      s.chunks = static_cast<int32_t>(chunks.size()) - s.first_chunk;
      if (s.chunks > 1) {
        close();
        const int64_t rows = static_cast<int64_t>(it.n_rows) * group;
        const int64_t line = kLine / sizeof(float);
        s.partial_stride = (rows * head_dim + rows + line - 1) / line * line;
        s.partial_offset = partial_floats;
        partial_floats += s.partial_stride * s.chunks;
        for (int32_t c = 0; c < s.chunks; ++c) tasks.push_back({i, 1, s.first_chunk + c, it.node});
        continue;
      }
      const int64_t cost = work_tokens(it.n, static_cast<int64_t>(it.n_rows) * group) + kItemOverheadTokens;
      const bool fits = open.count > 0 && open.node == it.node && open_cost + cost <= split &&
                        (config_.max_packed_heads <= 0 || open.count < config_.max_packed_heads);
      if (!fits) {
        close();
        open = {i, 0, -1, it.node};
      }
      ++open.count;
      open_cost += cost;
    }
    close();
  }

  std::unique_ptr<float[], AlignedFree> partial(
      partial_floats > 0 ? new (std::align_val_t(kLine)) float[partial_floats] : nullptr);
  std::unique_ptr<std::atomic<int32_t>[]> remaining(new std::atomic<int32_t>[units.size()]);
  for (size_t i = 0; i < units.size(); ++i) remaining[i].store(splits[i].chunks, std::memory_order_relaxed);

  // The chunks of a split item merged by LSE, in chunk order, by whichever chunk finishes last.
  auto combine = [&](int32_t i) {
    const SparseItem& it = units[i];
    const Split& s = splits[i];
    const int32_t rows = it.n_rows * group;
    const float* base = partial.get() + s.partial_offset;
    const int64_t lse_at = static_cast<int64_t>(rows) * head_dim;
    for (int32_t q = 0; q < rows; ++q) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int32_t c = 0; c < s.chunks; ++c) mx = std::max(mx, base[c * s.partial_stride + lse_at + q]);
      float* o = it.o + (q / group) * it.o_row_stride + (q % group) * head_dim;
      float sum = 0.0f;
      for (int32_t e = 0; e < head_dim; ++e) o[e] = 0.0f;
      for (int32_t c = 0; c < s.chunks; ++c) {
        const float* pc = base + c * s.partial_stride;
        const float w = std::exp(pc[lse_at + q] - mx);
        sum += w;
        const float* oc = pc + static_cast<int64_t>(q) * head_dim;
        for (int32_t e = 0; e < head_dim; ++e) o[e] += w * oc[e];
      }
      const float inv = 1.0f / sum;
      for (int32_t e = 0; e < head_dim; ++e) o[e] *= inv;
      it.lse[(q / group) * it.lse_row_stride + q % group] = mx + std::log(sum);
    }
  };

  // Worker slots of every arena, numbered consecutively for the busy-time counters.
  std::vector<int32_t> slot_base(arenas.size() + 1, 0);
  for (size_t a = 0; a < arenas.size(); ++a) slot_base[a + 1] = slot_base[a] + arenas[a]->max_concurrency();
  struct alignas(kLine) Busy {
    double seconds = 0.0;
  };
  std::vector<Busy> busy(stats ? static_cast<size_t>(slot_base.back()) : 0);

  // Chunk c of item `it`: its runs, in one pass.
  auto chunk_params = [&](const SparseItem& it, int32_t c) {
    arch::UnitParams p;
    p.q = it.q;
    p.q_row_stride = it.q_row_stride;
    p.n_rows = it.n_rows;
    p.group = group;
    p.head_dim = head_dim;
    p.sm_scale = sm_scale;
    p.o = it.o;
    p.o_row_stride = it.o_row_stride;
    p.lse = it.lse;
    p.lse_row_stride = it.lse_row_stride;
    const Chunk& ch = chunks[c];
    p.n = ch.n;
    p.runs = &runs[ch.first_run];
    p.n_runs = ch.runs;
    return p;
  };

  auto run_task = [&](const Task& t) {
    DenormalsFlushed ftz;
    const auto start = stats ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (t.chunk < 0) {
      for (int32_t i = t.first; i < t.first + t.count; ++i) kernel(chunk_params(units[i], splits[i].first_chunk));
    } else {
      const SparseItem& it = units[t.first];
      const Split& s = splits[t.first];
      arch::UnitParams p = chunk_params(it, t.chunk);
      const int32_t rows = it.n_rows * group;
      p.o = partial.get() + s.partial_offset + (t.chunk - s.first_chunk) * s.partial_stride;
      p.o_row_stride = static_cast<int64_t>(group) * head_dim;
      p.lse = p.o + static_cast<int64_t>(rows) * head_dim;
      p.lse_row_stride = group;
      kernel(p);
      if (remaining[t.first].fetch_sub(1, std::memory_order_acq_rel) == 1) combine(t.first);
    }
    if (stats) {
      const int slot = tbb::this_task_arena::current_thread_index();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (slot >= 0 && slot_base[t.node] + slot < slot_base[t.node + 1]) busy[slot_base[t.node] + slot].seconds += s;
    }
  };

  // Tasks of each node, in schedule order.
  std::vector<std::vector<int32_t>> by_node(arenas.size());
  for (int32_t t = 0; t < static_cast<int32_t>(tasks.size()); ++t) by_node[tasks[t].node].push_back(t);
  auto run_node = [&](size_t node) {
    const auto& ids = by_node[node];
    tbb::parallel_for(tbb::blocked_range<size_t>(0, ids.size(), 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t j = r.begin(); j != r.end(); ++j) run_task(tasks[ids[j]]);
                      },
                      tbb::simple_partitioner());
  };
  std::vector<int> active;
  for (size_t a = 0; a < arenas.size(); ++a) {
    if (!by_node[a].empty()) active.push_back(static_cast<int>(a));
  }
  run_in_arenas(arenas, active, [&](int a) { run_node(static_cast<size_t>(a)); });

  if (stats) {
    stats->busy_seconds.resize(busy.size(), 0.0);
    for (size_t s = 0; s < busy.size(); ++s) stats->busy_seconds[s] += busy[s].seconds;
    stats->tasks = static_cast<int64_t>(tasks.size());
    stats->kv_split_tokens = split;
    stats->partial_bytes = partial_floats * static_cast<int64_t>(sizeof(float));
  }
  return Status::ok();
}

}  // namespace hgca::cpu
