// The synthetic workload. Selection only means something when attention is concentrated, so each
// (layer, KV head) has a random unit "topic" direction u: queries carry a strong component along
// u and a few percent of keys (the salient tokens) do too; everything else is isotropic noise.
#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "devmem/devmem.hpp"
#include "hgca/dtype.hpp"

namespace hgca::decode {
namespace {

// Scores are q·k/√D with noise of unit variance per element; these put a salient key about
// kQueryTopic·kKeyTopic/√D ≈ 5 nats above the rest at D = 64 (e^5 ≈ 150× the weight).
constexpr float kQueryTopicPerSqrtD = 1.0f;  // |q along u| = √D, as large as the noise
constexpr float kKeyTopicPerSqrtD = 0.625f;  // |k along u| for salient keys

class InputMaker {
 public:
  InputMaker(const Options& o, const SyntheticWorkload& w)
      : o_(o), w_(w), rng_(w.seed),
        topics_(static_cast<std::size_t>(o.n_layers) * static_cast<std::size_t>(o.n_kv_heads * o.head_dim)) {
    for (std::size_t t = 0; t < topics_.size(); t += static_cast<std::size_t>(o.head_dim)) {
      float norm = 0.0f;
      for (int32_t d = 0; d < o.head_dim; ++d) {
        const float x = normal_(rng_);
        topics_[t + static_cast<std::size_t>(d)] = x;
        norm += x * x;
      }
      norm = std::sqrt(norm);
      for (int32_t d = 0; d < o.head_dim; ++d) topics_[t + static_cast<std::size_t>(d)] /= norm;
    }
  }

  /// Fills q [T, Hq, D], k, v [T, Hkv, D] of `layer` for T tokens, in fp32.
  void make(int32_t layer, int64_t T, std::vector<float>& q, std::vector<float>& k, std::vector<float>& v) {
    const int64_t Hq = o_.n_q_heads, Hkv = o_.n_kv_heads, D = o_.head_dim, group = Hq / Hkv;
    const float sqrt_d = std::sqrt(static_cast<float>(D));
    q.resize(static_cast<std::size_t>(T * Hq * D));
    k.resize(static_cast<std::size_t>(T * Hkv * D));
    v.resize(k.size());
    for (float& x : q) x = normal_(rng_);
    for (float& x : k) x = normal_(rng_);
    for (float& x : v) x = normal_(rng_);
    const float* topic = topics_.data() + static_cast<int64_t>(layer) * Hkv * D;
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t h = 0; h < Hq; ++h) {
        const float* u = topic + (h / group) * D;
        float* qh = q.data() + (t * Hq + h) * D;
        for (int64_t d = 0; d < D; ++d) qh[d] += kQueryTopicPerSqrtD * sqrt_d * u[d];
      }
      for (int64_t h = 0; h < Hkv; ++h) {
        if (uniform_(rng_) >= w_.salient_fraction) continue;
        const float* u = topic + h * D;
        float* kh = k.data() + (t * Hkv + h) * D;
        for (int64_t d = 0; d < D; ++d) kh[d] += kKeyTopicPerSqrtD * sqrt_d * u[d];
      }
    }
  }

 private:
  const Options& o_;
  const SyntheticWorkload& w_;
  std::mt19937_64 rng_;
  std::normal_distribution<float> normal_{0.0f, 1.0f};
  std::uniform_real_distribution<float> uniform_{0.0f, 1.0f};
  std::vector<float> topics_;  // [layers, Hkv, D], unit rows
};

// The step's inputs of every layer, already in the runtime's dtype.
struct StepInputs {
  std::vector<std::vector<std::byte>> q, k, v;  // per layer
};

void convert(DType dtype, const std::vector<float>& src, std::vector<std::byte>& dst) {
  dst.resize(src.size() * dtype_size(dtype));
  if (dtype == DType::kFloat32) {
    std::copy_n(reinterpret_cast<const std::byte*>(src.data()), dst.size(), dst.data());
  } else {
    convert_from_float(dtype, src, reinterpret_cast<uint16_t*>(dst.data()));
  }
}

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

  InputMaker maker(o, w);
  StepInputs in;
  in.q.resize(static_cast<std::size_t>(o.n_layers));
  in.k.resize(in.q.size());
  in.v.resize(in.q.size());
  std::vector<float> q, k, v;
  std::vector<std::byte> out_buf;
  // The CUDA backend takes device memory: each layer's inputs are uploaded before the step's timer
  // starts, and the timer stops when the stream has finished the step.
  const bool cuda = runtime.backend() == Backend::kCuda;
  devmem::Stream stream;
  std::vector<devmem::DeviceBuffer> q_dev(in.q.size()), k_dev(in.q.size()), v_dev(in.q.size());
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
    for (int32_t l = 0; l < o.n_layers; ++l) {
      const auto li = static_cast<std::size_t>(l);
      maker.make(l, T, q, k, v);
      convert(o.dtype, q, in.q[li]);
      convert(o.dtype, k, in.k[li]);
      convert(o.dtype, v, in.v[li]);
    }
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
