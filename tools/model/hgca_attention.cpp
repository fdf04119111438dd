// The model runner's attention through hgca::Runtime, with the fp32 ⇄ runtime-dtype boundary.
#include "model/hgca_attention.hpp"

#include <numeric>

#include <fmt/format.h>

#include "hgca/dtype.hpp"

namespace hgca::model {

Status HgcaAttention::create(const Options& options, std::unique_ptr<HgcaAttention>* out) {
  std::unique_ptr<Runtime> runtime;
  Status status = Runtime::create(options, &runtime);
  if (!status) return status;
  std::unique_ptr<HgcaAttention> attention(new HgcaAttention(std::move(runtime)));
  if (attention->runtime_->backend() == Backend::kCuda) {
    if (Status s = devmem::Stream::create(&attention->stream_); !s) return s;
  }
  *out = std::move(attention);
  return Status::ok();
}

Status HgcaAttention::begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) {
  Status status = runtime_->begin_step(seq_ids, n_new);
  if (status) {
    in_step_ = true;
    step_tokens_ = std::accumulate(n_new.begin(), n_new.end(), int64_t{0});
  }
  return status;
}

Status HgcaAttention::end_step() {
  Status status = runtime_->end_step();
  if (status) in_step_ = false;
  return status;
}

Status HgcaAttention::attend(int32_t layer, std::span<const float> q, std::span<const float> k,
                             std::span<const float> v, std::span<float> out) {
  if (!in_step_) return {StatusCode::kFailedPrecondition, "attend: called outside a step (before begin_step)"};
  const Options& o = runtime_->options();
  const int64_t T = step_tokens_, Hq = o.n_q_heads, Hkv = o.n_kv_heads, D = o.head_dim;
  const auto q_elems = static_cast<std::size_t>(T * Hq * D);
  const auto kv_elems = static_cast<std::size_t>(T * Hkv * D);
  // The views below take their shapes from the step, so the spans must hold exactly that much.
  if (q.size() != q_elems || out.size() != q_elems || k.size() != kv_elems || v.size() != kv_elems) {
    return {StatusCode::kInvalidArgument,
            fmt::format("attend: expected q and out of {} elements and k, v of {} ([T={}, H, D={}]), got q {}, k {}, "
                        "v {}, out {}", q_elems, kv_elems, T, D, q.size(), k.size(), v.size(), out.size())};
  }
  if (o.dtype == DType::kFloat32) return call(layer, q.data(), k.data(), v.data(), out.data());
  q16_.resize(q_elems);
  k16_.resize(kv_elems);
  v16_.resize(kv_elems);
  out16_.resize(q_elems);
  convert_from_float(o.dtype, q, q16_.data());
  convert_from_float(o.dtype, k, k16_.data());
  convert_from_float(o.dtype, v, v16_.data());
  Status status = call(layer, q16_.data(), k16_.data(), v16_.data(), out16_.data());
  if (status) convert_to_float(o.dtype, out16_.data(), out);
  return status;
}

Status HgcaAttention::call(int32_t layer, const void* q, const void* k, const void* v, void* out) {
  const Options& o = runtime_->options();
  const int64_t T = step_tokens_, Hq = o.n_q_heads, Hkv = o.n_kv_heads, D = o.head_dim;
  const std::array<int64_t, 3> q_shape{T, Hq, D}, kv_shape{T, Hkv, D};
  if (runtime_->backend() != Backend::kCuda) {
    return runtime_->attention(layer, TensorView{q, o.dtype, q_shape}, TensorView{k, o.dtype, kv_shape},
                               TensorView{v, o.dtype, kv_shape}, MutableTensorView{out, o.dtype, q_shape});
  }
  const auto q_bytes = static_cast<std::size_t>(T * Hq * D) * dtype_size(o.dtype);
  const auto kv_bytes = static_cast<std::size_t>(T * Hkv * D) * dtype_size(o.dtype);
  for (auto [buffer, bytes] : {std::pair{&q_dev_, q_bytes}, {&k_dev_, kv_bytes}, {&v_dev_, kv_bytes}, {&out_dev_, q_bytes}}) {
    if (Status s = buffer->reserve(bytes); !s) return s;
  }
  Status s = q_dev_.upload(q, q_bytes, stream_);
  if (s) s = k_dev_.upload(k, kv_bytes, stream_);
  if (s) s = v_dev_.upload(v, kv_bytes, stream_);
  if (s) {
    s = runtime_->attention(layer, TensorView{q_dev_.get(), o.dtype, q_shape}, TensorView{k_dev_.get(), o.dtype, kv_shape},
                            TensorView{v_dev_.get(), o.dtype, kv_shape},
                            MutableTensorView{out_dev_.get(), o.dtype, q_shape}, nullptr, stream_.get());
  }
  if (s) s = out_dev_.download(out, q_bytes, stream_);
  if (s) s = stream_.synchronize();
  return s;
}

}  // namespace hgca::model
