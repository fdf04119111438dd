// The synthetic workload. Selection only means something when attention is concentrated, so each
// (layer, KV head) has a random unit "topic" direction u: queries carry a strong component along
// u and a few percent of keys (the salient tokens) do too; everything else is isotropic noise.
#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>

#include "devmem/devmem.hpp"
#include "hgca/dtype.hpp"

namespace hgca::decode {
namespace {

// Scores are q·k/√D with noise of unit variance per element; these put a salient key about
// kQueryTopic·kKeyTopic/√D ≈ 5 nats above the rest at D = 64 (e^5 ≈ 150× the weight).
constexpr float kQueryTopicPerSqrtD = 1.0f;  // |q along u| = √D, as large as the noise
constexpr float kKeyTopicPerSqrtD = 0.625f;  // |k along u| for salient keys

/// Rows of one input task: each has its own generator, seeded from (seed, step, layer, first row),
/// so the inputs do not depend on how many threads make them.
constexpr int64_t kRowsPerTask = 64;

/// A step's inputs of every layer, already in the runtime's dtype.
struct StepInputs {
  std::vector<std::vector<std::byte>> q, k, v;  // per layer
};

class InputMaker {
 public:
  InputMaker(const Options& o, const SyntheticWorkload& w)
      : o_(o),
        w_(w),
        topics_(static_cast<std::size_t>(o.n_layers) * static_cast<std::size_t>(o.n_kv_heads * o.head_dim)) {
    std::mt19937_64 rng(w.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::size_t t = 0; t < topics_.size(); t += static_cast<std::size_t>(o.head_dim)) {
      float norm = 0.0f;
      for (int32_t d = 0; d < o.head_dim; ++d) {
        const float x = normal(rng);
        topics_[t + static_cast<std::size_t>(d)] = x;
        norm += x * x;
      }
      norm = std::sqrt(norm);
      for (int32_t d = 0; d < o.head_dim; ++d) topics_[t + static_cast<std::size_t>(d)] /= norm;
    }
  }

  /// Fills q [T, Hq, D], k, v [T, Hkv, D] of every layer for step `step`'s T tokens, in the runtime's
  /// dtype, on every core (made on one thread, a 4096-token prompt of 8 layers took ~20 s to make
  /// and 1 s to attend on the H200: bench/results/session48, call 10).
  void make(int64_t step, int64_t T, StepInputs& in) const {
    const auto layers = static_cast<std::size_t>(o_.n_layers);
    const std::size_t elem = dtype_size(o_.dtype);
    in.q.resize(layers);
    in.k.resize(layers);
    in.v.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) {
      in.q[l].resize(static_cast<std::size_t>(T * o_.n_q_heads * o_.head_dim) * elem);
      in.k[l].resize(static_cast<std::size_t>(T * o_.n_kv_heads * o_.head_dim) * elem);
      in.v[l].resize(in.k[l].size());
    }
    const int64_t blocks = (T + kRowsPerTask - 1) / kRowsPerTask;
    tbb::parallel_for(int64_t{0}, static_cast<int64_t>(layers) * blocks, [&](int64_t task) {
      const int64_t t0 = task % blocks * kRowsPerTask;
      make_rows(step, static_cast<int32_t>(task / blocks), t0, std::min(T, t0 + kRowsPerTask), in);
    });
  }

 private:
  /// Tokens [t0, t1) of `layer`: isotropic noise, queries along their head's topic, a salient share
  /// of keys along it too.
  void make_rows(int64_t step, int32_t layer, int64_t t0, int64_t t1, StepInputs& in) const {
    const int64_t Hq = o_.n_q_heads, Hkv = o_.n_kv_heads, D = o_.head_dim, group = Hq / Hkv, rows = t1 - t0;
    // seed_seq keeps 32 bits of each value: the seed goes in as its two halves.
    std::seed_seq seed{static_cast<uint32_t>(w_.seed), static_cast<uint32_t>(w_.seed >> 32),
                       static_cast<uint32_t>(step), static_cast<uint32_t>(layer), static_cast<uint32_t>(t0)};
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    thread_local std::vector<float> q, k, v;
    q.resize(static_cast<std::size_t>(rows * Hq * D));
    k.resize(static_cast<std::size_t>(rows * Hkv * D));
    v.resize(k.size());
    for (float& x : q) x = normal(rng);
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    const float sqrt_d = std::sqrt(static_cast<float>(D));
    const float* topic = topics_.data() + static_cast<int64_t>(layer) * Hkv * D;
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t h = 0; h < Hq; ++h) {
        const float* u = topic + (h / group) * D;
        float* qh = q.data() + (t * Hq + h) * D;
        for (int64_t d = 0; d < D; ++d) qh[d] += kQueryTopicPerSqrtD * sqrt_d * u[d];
      }
      for (int64_t h = 0; h < Hkv; ++h) {
        if (uniform(rng) >= w_.salient_fraction) continue;
        const float* u = topic + h * D;
        float* kh = k.data() + (t * Hkv + h) * D;
        for (int64_t d = 0; d < D; ++d) kh[d] += kKeyTopicPerSqrtD * sqrt_d * u[d];
      }
    }
    const auto l = static_cast<std::size_t>(layer);
    const std::size_t elem = dtype_size(o_.dtype);
    convert(q, in.q[l].data() + static_cast<std::size_t>(t0 * Hq * D) * elem);
    convert(k, in.k[l].data() + static_cast<std::size_t>(t0 * Hkv * D) * elem);
    convert(v, in.v[l].data() + static_cast<std::size_t>(t0 * Hkv * D) * elem);
  }

  void convert(const std::vector<float>& src, std::byte* dst) const {
    if (o_.dtype == DType::kFloat32) {
      std::copy_n(reinterpret_cast<const std::byte*>(src.data()), src.size() * sizeof(float), dst);
    } else {
      convert_from_float(o_.dtype, src, reinterpret_cast<uint16_t*>(dst));
    }
  }

  const Options& o_;
  const SyntheticWorkload& w_;
  std::vector<float> topics_;  // [layers, Hkv, D], unit rows
};

/// LayerStats::transfer_seconds summed over the layers (waits for enqueued work).
Status transfer_seconds(const Runtime& runtime, double* out) {
  *out = 0.0;
  for (int32_t l = 0; l < runtime.options().n_layers; ++l) {
    LayerStats st;
    if (Status s = runtime.layer_stats(l, &st); !s) return s;
    *out += st.transfer_seconds;
  }
  return Status::ok();
}

}  // namespace

Status store_memory_total(const Runtime& runtime, StoreMemoryStats* out) {
  std::vector<StoreMemoryStats> nodes;
  if (Status s = runtime.store_memory_stats(&nodes); !s) return s;
  StoreMemoryStats t;
  t.node = -1;
  for (const StoreMemoryStats& n : nodes) {
    t.chunks += n.chunks;
    t.registered_chunks += n.registered_chunks;
    t.bound_chunks += n.bound_chunks;
    t.reserved_bytes += n.reserved_bytes;
    t.used_bytes += n.used_bytes;
    t.sync_growths += n.sync_growths;
    t.background_growths += n.background_growths;
    t.released_chunks += n.released_chunks;
    t.registration_failures += n.registration_failures;
  }
  *out = t;
  return Status::ok();
}

Status run_synthetic(Runtime& runtime, const SyntheticWorkload& w,
                     const std::function<void(int64_t positions)>& on_step, SyntheticTimes* out) {
  const Options& o = runtime.options();
  if (w.batch < 1 || w.context < 1 || w.chunk < 1 || w.decode_steps < 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("synthetic workload: batch {}, context {}, chunk {}, decode steps {}; expected ≥ 1, ≥ 1, "
                        "≥ 1, ≥ 0", w.batch, w.context, w.chunk, w.decode_steps)};
  }
  std::vector<SeqId> ids(static_cast<std::size_t>(w.batch));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = i;
    Status status = runtime.add_sequence(ids[i]);
    if (!status) return status;
  }

  const InputMaker maker(o, w);
  StepInputs in;
  std::vector<std::byte> out_buf;
  // The CUDA backend takes device memory: each layer's inputs are uploaded before the step's timer
  // starts, and the timer stops when the stream has finished the step.
  const bool cuda = runtime.backend() == Backend::kCuda;
  devmem::Stream stream;
  const auto layers = static_cast<std::size_t>(o.n_layers);
  std::vector<devmem::DeviceBuffer> q_dev(layers), k_dev(layers), v_dev(layers);
  devmem::DeviceBuffer out_dev;
  if (cuda) {
    if (Status s = devmem::Stream::create(&stream); !s) return s;
  }
  const int32_t prefill_steps = w.prefill_steps();
  const int64_t total_steps = int64_t{prefill_steps} + w.decode_steps;
  int64_t positions = 0;
  SyntheticTimes times;
  times.prefill_steps = prefill_steps;
  double transfer_before_decode = 0.0;
  StoreMemoryStats memory_before_decode;

  for (int64_t step = 0; step < total_steps; ++step) {
    const bool prefill = step < prefill_steps;
    const int32_t n = prefill ? std::min(w.chunk, w.context - static_cast<int32_t>(step) * w.chunk) : 1;
    const int64_t T = static_cast<int64_t>(n) * w.batch;
    maker.make(step, T, in);
    out_buf.resize(in.q[0].size());
    if (cuda) {
      for (std::size_t l = 0; l < in.q.size(); ++l) {
        for (auto [dev, host] : {std::pair{&q_dev[l], &in.q[l]}, {&k_dev[l], &in.k[l]}, {&v_dev[l], &in.v[l]}}) {
          if (Status s = dev->reserve(host->size()); !s) return s;
          if (Status s = dev->upload(host->data(), host->size(), stream); !s) return s;
        }
      }
      if (Status s = out_dev.reserve(out_buf.size()); !s) return s;
      if (Status s = stream.synchronize(); !s) return s;
    }
    const std::vector<int32_t> n_new(ids.size(), n);
    const std::array<int64_t, 3> q_shape{T, o.n_q_heads, o.head_dim}, kv_shape{T, o.n_kv_heads, o.head_dim};

    const auto t0 = std::chrono::steady_clock::now();
    Status status = runtime.begin_step(ids, n_new);
    if (!status) return status;
    for (int32_t l = 0; l < o.n_layers && status; ++l) {
      const auto li = static_cast<std::size_t>(l);
      if (cuda) {
        status = runtime.attention(l, TensorView{q_dev[li].get(), o.dtype, q_shape},
                                   TensorView{k_dev[li].get(), o.dtype, kv_shape},
                                   TensorView{v_dev[li].get(), o.dtype, kv_shape},
                                   MutableTensorView{out_dev.get(), o.dtype, q_shape}, nullptr, stream.get());
      } else {
        status = runtime.attention(l, TensorView{in.q[li].data(), o.dtype, q_shape},
                                   TensorView{in.k[li].data(), o.dtype, kv_shape},
                                   TensorView{in.v[li].data(), o.dtype, kv_shape},
                                   MutableTensorView{out_buf.data(), o.dtype, q_shape});
      }
    }
    if (!status) return status;
    status = runtime.end_step();
    const double enqueue_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status && cuda) status = stream.synchronize();
    if (!status) return status;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    if (prefill) {
      times.prefill_seconds += seconds;
      if (step + 1 == prefill_steps) {
        if (Status s = transfer_seconds(runtime, &transfer_before_decode); !s) return s;
        if (Status s = store_memory_total(runtime, &memory_before_decode); !s) return s;
      }
    } else {
      times.decode_seconds.push_back(seconds);
      times.decode_enqueue_seconds.push_back(enqueue_seconds);
    }
    positions += n;
    if (on_step) on_step(positions);
  }
  if (Status s = transfer_seconds(runtime, &times.decode_transfer_seconds); !s) return s;
  times.decode_transfer_seconds -= transfer_before_decode;
  StoreMemoryStats memory;
  if (Status s = store_memory_total(runtime, &memory); !s) return s;
  times.decode_sync_growths = memory.sync_growths - memory_before_decode.sync_growths;
  *out = std::move(times);
  return Status::ok();
}

}  // namespace hgca::decode
