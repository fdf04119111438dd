// The sparse-attention workload hgca-tune sweeps (see workload.hpp): step() is one call of the CPU
// engine (cpu::SparseEngine) over the step's (sequence, KV head) items, each on its sequence's node.
#include "workload.hpp"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "bandwidth.hpp"
#include "cpu/sparse_engine.hpp"
#include "cpu/placement.hpp"
#include "dtype.hpp"

namespace hgca::tune {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64: cheap, deterministic, never all zeros
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
float uniform(uint64_t key) { return static_cast<float>(mix(key) >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f; }

/// One (layer, sequence)'s context sets: every KV head's K rows, then every head's V rows, with a
/// tail so that a task padded to its longest head stays in bounds.
struct Block {
  const cpu::Topology* topology = nullptr;
  void* data = nullptr;
  std::size_t bytes = 0;
  int node = -1;
  std::vector<int64_t> length;  // per KV head: |S|
  std::vector<int64_t> offset;  // per KV head: first row
  int64_t v_base = 0;           // row where V starts
  ~Block() {
    if (data) cpu::node_free(data, bytes);
  }
};


}  // namespace

struct SparseWorkload::Impl {
  std::size_t elem = 2;
  std::vector<std::vector<Block>> blocks;  // [layer][seq]
  std::vector<std::vector<float>> q;       // [seq]: [Hq, D] as floats, converted to T when filled
  std::vector<std::vector<std::byte>> q_typed;
  std::vector<std::vector<float>> out;     // [seq]: [Hq, D]
  std::vector<std::vector<float>> lse;     // [seq]: [Hq]
  std::vector<cpu::SparseItem> items;      // scratch of the current step
};

const char* engine_name() { return "cpu::SparseEngine (SIMD sparse attention, decode blocks of 16 keys)"; }

std::string engine_auto_isa() { return cpu::to_string(cpu::best_isa()); }

std::vector<CpuIsa> engine_isas(DType dtype) {
  std::vector<CpuIsa> out{CpuIsa::kAuto};
  for (CpuIsa isa : cpu::supported_isas()) {
    // AVX512-BF16 differs from AVX-512 only for bf16 K.
    if (isa != CpuIsa::kAvx512Bf16 || dtype == DType::kBFloat16) out.push_back(isa);
  }
  return out;
}

double SparseWorkload::layer_bytes_estimate(const WorkloadShape& s) {
  const double rows = static_cast<double>(s.context) * s.selected_fraction * s.kv_heads * s.batch;
  return rows * s.head_dim * 2 * static_cast<double>(dtype_size(s.dtype));
}

SparseWorkload::SparseWorkload(const WorkloadShape& shape, int layers, std::vector<int> gpu_local_nodes)
    : impl_(std::make_unique<Impl>()), shape_(shape), layers_(std::max(layers, 1)), gpu_local_(std::move(gpu_local_nodes)) {
  impl_->elem = dtype_size(shape.dtype);
  impl_->blocks.resize(static_cast<std::size_t>(layers_));
  for (int l = 0; l < layers_; ++l) {
    impl_->blocks[static_cast<std::size_t>(l)] = std::vector<Block>(static_cast<std::size_t>(shape.batch));
    for (int s = 0; s < shape.batch; ++s) {
      Block& b = impl_->blocks[static_cast<std::size_t>(l)][static_cast<std::size_t>(s)];
      int64_t rows = 0, longest = 0;
      for (int h = 0; h < shape.kv_heads; ++h) {
        const uint64_t key = (static_cast<uint64_t>(l) << 40) ^ (static_cast<uint64_t>(s) << 20) ^ static_cast<uint64_t>(h);
        const double spread = 1.0 + 0.75 * uniform(key);  // [0.25, 1.75] × the mean fraction
        const auto n = std::clamp<int64_t>(std::llround(static_cast<double>(shape.context) * shape.selected_fraction * spread),
                                           1, shape.context);
        b.offset.push_back(rows);
        b.length.push_back(n);
        rows += n;
        longest = std::max(longest, n);
      }
      b.v_base = rows + longest;
      b.bytes = static_cast<std::size_t>(2 * b.v_base * shape.head_dim) * impl_->elem;
    }
  }
  for (int s = 0; s < shape.batch; ++s) {
    std::vector<float> qs(static_cast<std::size_t>(shape.q_heads) * static_cast<std::size_t>(shape.head_dim));
    for (std::size_t i = 0; i < qs.size(); ++i) qs[i] = uniform((uint64_t{1} << 62) ^ (static_cast<uint64_t>(s) << 32) ^ i);
    std::vector<std::byte> typed(qs.size() * impl_->elem);
    detail::dispatch_dtype(shape.dtype, [&](auto t) {
      using T = decltype(t);
      auto* p = reinterpret_cast<T*>(typed.data());
      for (std::size_t i = 0; i < qs.size(); ++i) p[i] = detail::from_float<T>(qs[i]);
    });
    impl_->q.push_back(std::move(qs));
    impl_->q_typed.push_back(std::move(typed));
    impl_->out.emplace_back(static_cast<std::size_t>(shape.q_heads) * static_cast<std::size_t>(shape.head_dim), 0.0f);
    impl_->lse.emplace_back(static_cast<std::size_t>(shape.q_heads), 0.0f);
  }
  node_of_seq_.assign(static_cast<std::size_t>(shape.batch), -1);
}

SparseWorkload::~SparseWorkload() = default;

uint64_t SparseWorkload::step_bytes(int layer) const {
  uint64_t rows = 0;
  for (const Block& b : impl_->blocks[static_cast<std::size_t>(layer % layers_)]) {
    for (int64_t n : b.length) rows += static_cast<uint64_t>(n);
  }
  return rows * static_cast<uint64_t>(shape_.head_dim) * 2 * impl_->elem;
}

uint64_t SparseWorkload::total_bytes() const {
  uint64_t sum = 0;
  for (int l = 0; l < layers_; ++l) sum += step_bytes(l);
  return sum;
}

void SparseWorkload::place(cpu::Pool& pool, NumaPlacement placement) {
  // Each sequence's load: its selected rows over all layers.
  std::vector<double> load(static_cast<std::size_t>(shape_.batch), 0.0);
  for (const auto& layer : impl_->blocks) {
    for (std::size_t s = 0; s < layer.size(); ++s) {
      for (int64_t n : layer[s].length) load[s] += static_cast<double>(n);
    }
  }
  const std::vector<int> node_of = cpu::assign_sequences(load, pool.threads_per_node(), gpu_local_, placement);
  const cpu::Topology& topo = pool.topology();
  std::atomic<bool> wrote{false};
  run_on_every_node(pool, [&](int node) {
    for (auto& layer : impl_->blocks) {
      for (std::size_t s = 0; s < layer.size(); ++s) {
        Block& b = layer[s];
        if (node_of[s] != node || (b.data && b.node == node && b.topology == &topo)) continue;
        wrote = true;
        if (b.data) cpu::node_free(b.data, b.bytes);
        b.topology = &topo;
        b.node = node;
        b.data = cpu::node_alloc(topo, node, b.bytes);
        if (!b.data) throw std::bad_alloc();
        // Filled from the node's own arena: first touch lands there even where binding is unsupported.
        const int64_t rows = 2 * b.v_base;
        const int d = shape_.head_dim;
        detail::dispatch_dtype(shape_.dtype, [&](auto t) {
          using T = decltype(t);
          T* p = static_cast<T*>(b.data);
          tbb::parallel_for(int64_t{0}, rows, int64_t{256}, [&](int64_t r0) {
            for (int64_t r = r0; r < std::min(rows, r0 + 256); ++r) {
              for (int i = 0; i < d; ++i) {
                p[r * d + i] = detail::from_float<T>(uniform((static_cast<uint64_t>(s) << 48) ^ static_cast<uint64_t>(r * d + i)));
              }
            }
          });
        });
      }
    }
  });
  node_of_seq_ = node_of;
  // Layers 0, 1, … were just written in that order, the last ones still in cache: the measurements
  // start again from layer 0, the longest out.
  if (wrote) next_layer_ = 0;
}

double SparseWorkload::step(cpu::Pool& pool, int layer, const EngineConfig& config) {
  Impl& m = *impl_;
  const auto& blocks = m.blocks[static_cast<std::size_t>(layer % layers_)];
  const int hkv = shape_.kv_heads, group = shape_.q_heads / shape_.kv_heads, d = shape_.head_dim;
  const int64_t q_stride = static_cast<int64_t>(shape_.q_heads) * d;
  m.items.clear();
  for (int s = 0; s < shape_.batch; ++s) {
    const Block& b = blocks[static_cast<std::size_t>(s)];
    const auto* base = static_cast<const std::byte*>(b.data);
    for (int h = 0; h < hkv; ++h) {
      const int64_t row = b.offset[static_cast<std::size_t>(h)];
      cpu::SparseItem it;
      it.k = base + static_cast<std::size_t>(row * d) * m.elem;
      it.v = base + static_cast<std::size_t>((b.v_base + row) * d) * m.elem;
      it.n = b.length[static_cast<std::size_t>(h)];
      it.q = m.q_typed[static_cast<std::size_t>(s)].data() + static_cast<std::size_t>(h * group * d) * m.elem;
      it.q_row_stride = q_stride;
      it.n_rows = 1;
      it.o = m.out[static_cast<std::size_t>(s)].data() + static_cast<std::size_t>(h * group * d);
      it.o_row_stride = q_stride;
      it.lse = m.lse[static_cast<std::size_t>(s)].data() + h * group;
      it.lse_row_stride = shape_.q_heads;
      it.node = node_of_seq_[static_cast<std::size_t>(s)];
      m.items.push_back(it);
    }
  }
  std::vector<tbb::task_arena*> arenas;
  for (int node = 0; node < pool.node_count(); ++node) arenas.push_back(&pool.arena(node));
  // The engine exactly as a runtime loading this configuration builds it.
  Options tuned;
  tuned.isa = config.isa;
  tuned.kv_split_tokens = config.kv_split_tokens;
  tuned.max_packed_heads = config.max_packed_heads;
  const cpu::SparseEngine engine(cpu::engine_config(tuned));
  cpu::SparseEngineStats stats;
  const Status st = engine.attend(shape_.dtype, group, d, 1.0f / std::sqrt(static_cast<float>(d)), m.items,
                                  std::span<tbb::task_arena* const>(arenas), &stats);
  if (!st) throw std::runtime_error("hgca-tune: the engine refused the workload: " + st.message());
  // Load balance: the slowest worker's busy time over the mean of those that worked.
  double sum = 0, mx = 0;
  int busy = 0;
  for (double t : stats.busy_seconds) {
    if (t <= 0) continue;
    sum += t;
    mx = std::max(mx, t);
    ++busy;
  }
  return busy > 0 ? mx / (sum / busy) : 1.0;
}

}  // namespace hgca::tune
