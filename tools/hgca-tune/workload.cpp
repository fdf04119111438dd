// The sparse-attention workload hgca-tune sweeps (see workload.hpp). Until the SIMD engine lands
// (branch cpu-engine), step() calls the host reference kernel cpu::attend_group per task.
#include "workload.hpp"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "bandwidth.hpp"
#include "cpu/attention_host.hpp"
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
    if (data) cpu::node_free(*topology, data, bytes);
  }
};

struct Task {
  int seq, h0, nh;
  int64_t t0, n;  // rows [t0, t0 + n) of each head of the task (padded heads read past their own)
  std::size_t part;  // first partial output row (each row: one query head)
};

}  // namespace

struct SparseWorkload::Impl {
  std::size_t elem = 2;
  std::vector<std::vector<Block>> blocks;  // [layer][seq]
  std::vector<std::vector<float>> q;       // [seq]: [Hq, D] as floats, converted to T when filled
  std::vector<std::vector<std::byte>> q_typed;
  std::vector<std::vector<float>> out;     // [seq]: [Hq, D]
  // Scratch of the current step.
  std::vector<Task> tasks;
  std::vector<std::size_t> node_first_task;  // tasks sorted by node; per node its first task
  std::vector<float> part_o, part_lse;
  std::vector<std::vector<int>> head_tasks;  // per (seq * Hkv + h): its tasks in order
};

const char* engine_name() { return "cpu::attend_group (host reference kernel; the SIMD engine is not merged yet)"; }

std::vector<CpuIsa> engine_isas() { return {CpuIsa::kAuto}; }

uint64_t SparseWorkload::layer_bytes_estimate(const WorkloadShape& s) {
  const double rows = static_cast<double>(s.context) * s.selected_fraction * s.kv_heads * s.batch;
  return static_cast<uint64_t>(rows * s.head_dim * 2 * static_cast<double>(dtype_size(s.dtype)));
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
    std::vector<float> qs(static_cast<std::size_t>(shape.q_heads * shape.head_dim));
    for (std::size_t i = 0; i < qs.size(); ++i) qs[i] = uniform((uint64_t{1} << 62) ^ (static_cast<uint64_t>(s) << 32) ^ i);
    std::vector<std::byte> typed(qs.size() * impl_->elem);
    detail::dispatch_dtype(shape.dtype, [&](auto t) {
      using T = decltype(t);
      auto* p = reinterpret_cast<T*>(typed.data());
      for (std::size_t i = 0; i < qs.size(); ++i) p[i] = detail::from_float<T>(qs[i]);
    });
    impl_->q.push_back(std::move(qs));
    impl_->q_typed.push_back(std::move(typed));
    impl_->out.emplace_back(static_cast<std::size_t>(shape.q_heads * shape.head_dim), 0.0f);
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
  run_on_every_node(pool, [&](int node) {
    for (auto& layer : impl_->blocks) {
      for (std::size_t s = 0; s < layer.size(); ++s) {
        Block& b = layer[s];
        if (node_of[s] != node || (b.data && b.node == node && b.topology == &topo)) continue;
        if (b.data) cpu::node_free(*b.topology, b.data, b.bytes);
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
}

void SparseWorkload::step(cpu::Pool& pool, int layer, const EngineConfig& config) {
  Impl& m = *impl_;
  const auto& blocks = m.blocks[static_cast<std::size_t>(layer % layers_)];
  const int hkv = shape_.kv_heads, group = shape_.q_heads / shape_.kv_heads, d = shape_.head_dim;
  const int hpt = std::clamp(config.heads_per_task, 1, hkv);

  // Plan: tasks over (sequence, group of hpt adjacent heads padded to the longest, KV split),
  // grouped by the sequence's node.
  m.tasks.clear();
  m.head_tasks.assign(static_cast<std::size_t>(shape_.batch * hkv), {});
  std::size_t part = 0;
  const int nodes = pool.node_count();
  m.node_first_task.assign(static_cast<std::size_t>(nodes + 1), 0);
  for (int node = 0; node < nodes; ++node) {
    m.node_first_task[static_cast<std::size_t>(node)] = m.tasks.size();
    for (int s = 0; s < shape_.batch; ++s) {
      if (node_of_seq_[static_cast<std::size_t>(s)] != node) continue;
      const Block& b = blocks[static_cast<std::size_t>(s)];
      for (int h0 = 0; h0 < hkv; h0 += hpt) {
        const int nh = std::min(hpt, hkv - h0);
        int64_t padded = 0;
        for (int h = h0; h < h0 + nh; ++h) padded = std::max(padded, b.length[static_cast<std::size_t>(h)]);
        const int64_t split = config.kv_split_tokens > 0 ? config.kv_split_tokens : padded;
        for (int64_t t0 = 0; t0 < padded; t0 += split) {
          for (int h = h0; h < h0 + nh; ++h) {
            m.head_tasks[static_cast<std::size_t>(s * hkv + h)].push_back(static_cast<int>(m.tasks.size()));
          }
          m.tasks.push_back({s, h0, nh, t0, std::min(split, padded - t0), part});
          part += static_cast<std::size_t>(nh * group);
        }
      }
    }
  }
  m.node_first_task[static_cast<std::size_t>(nodes)] = m.tasks.size();
  m.part_o.resize(part * static_cast<std::size_t>(d));
  m.part_lse.resize(part);

  detail::dispatch_dtype(shape_.dtype, [&](auto t) {
    using T = decltype(t);
    run_on_every_node(pool, [&](int node) {
      const std::size_t first = m.node_first_task[static_cast<std::size_t>(node)];
      const std::size_t last = m.node_first_task[static_cast<std::size_t>(node) + 1];
      // Attend: each task's heads over its rows, partial outputs normalized over those rows.
      tbb::parallel_for(first, last, [&](std::size_t i) {
        const Task& task = m.tasks[i];
        const Block& b = blocks[static_cast<std::size_t>(task.seq)];
        const T* base = static_cast<const T*>(b.data);
        const T* q = reinterpret_cast<const T*>(m.q_typed[static_cast<std::size_t>(task.seq)].data());
        for (int j = 0; j < task.nh; ++j) {
          const int h = task.h0 + j;
          const int64_t row = b.offset[static_cast<std::size_t>(h)] + task.t0;
          const cpu::KvSegment<T> seg{base + row * d, base + (b.v_base + row) * d, task.n, d};
          cpu::GroupAttentionParams<T> p;
          p.q = q + static_cast<int64_t>(h) * group * d;
          p.q_row_stride = static_cast<int64_t>(shape_.q_heads) * d;
          p.n_rows = 1;
          p.group = group;
          p.head_dim = d;
          p.sm_scale = 1.0f / std::sqrt(static_cast<float>(d));
          p.segments = std::span<const cpu::KvSegment<T>>(&seg, 1);
          const std::size_t row_part = task.part + static_cast<std::size_t>(j * group);
          p.o = m.part_o.data() + row_part * static_cast<std::size_t>(d);
          p.o_row_stride = static_cast<int64_t>(group) * d;
          p.lse = m.part_lse.data() + row_part;
          p.lse_row_stride = group;
          cpu::attend_group(p);
        }
      });
      // Merge each head's splits by LSE into the sequence's output.
      tbb::parallel_for(0, shape_.batch * hkv, [&](int sh) {
        const int s = sh / hkv, h = sh % hkv;
        if (node_of_seq_[static_cast<std::size_t>(s)] != node) return;
        const auto& parts = m.head_tasks[static_cast<std::size_t>(sh)];
        for (int g = 0; g < group; ++g) {
          float mx = -std::numeric_limits<float>::infinity();
          std::vector<std::size_t> rows;
          for (int ti : parts) {
            const Task& task = m.tasks[static_cast<std::size_t>(ti)];
            rows.push_back(task.part + static_cast<std::size_t>((h - task.h0) * group + g));
            mx = std::max(mx, m.part_lse[rows.back()]);
          }
          float* o = m.out[static_cast<std::size_t>(s)].data() + static_cast<std::size_t>((h * group + g) * d);
          std::fill(o, o + d, 0.0f);
          if (!std::isfinite(mx)) continue;
          float denom = 0.0f;
          for (std::size_t r : rows) {
            const float w = std::exp(m.part_lse[r] - mx);
            denom += w;
            const float* po = m.part_o.data() + r * static_cast<std::size_t>(d);
            for (int i = 0; i < d; ++i) o[i] += w * po[i];
          }
          for (int i = 0; i < d; ++i) o[i] /= denom;
        }
      });
    });
  });
}

}  // namespace hgca::tune
