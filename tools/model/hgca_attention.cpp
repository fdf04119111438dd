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
  out->reset(new HgcaAttention(std::move(runtime)));
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
  const std::array<int64_t, 3> q_shape{T, Hq, D}, kv_shape{T, Hkv, D};
  if (o.dtype == DType::kFloat32) {
    return runtime_->attention(layer, TensorView{q.data(), o.dtype, q_shape}, TensorView{k.data(), o.dtype, kv_shape},
                               TensorView{v.data(), o.dtype, kv_shape},
                               MutableTensorView{out.data(), o.dtype, q_shape});
  }
  q16_.resize(q_elems);
  k16_.resize(kv_elems);
  v16_.resize(kv_elems);
  out16_.resize(q_elems);
  convert_from_float(o.dtype, q, q16_.data());
  convert_from_float(o.dtype, k, k16_.data());
  convert_from_float(o.dtype, v, v16_.data());
  Status status = runtime_->attention(layer, TensorView{q16_.data(), o.dtype, q_shape},
                                      TensorView{k16_.data(), o.dtype, kv_shape},
                                      TensorView{v16_.data(), o.dtype, kv_shape},
                                      MutableTensorView{out16_.data(), o.dtype, q_shape});
  if (status) convert_to_float(o.dtype, out16_.data(), out);
  return status;
}

}  // namespace hgca::model
