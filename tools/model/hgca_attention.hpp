// The model runner's attention through hgca::Runtime: window, store and context set (HGCA).
#pragma once

#include <memory>
#include <vector>

#include "devmem/devmem.hpp"
#include "model/attention_backend.hpp"

namespace hgca::model {

/// Hands every attention call to an hgca::Runtime. The model works in fp32; when the runtime's
/// dtype is bf16 or fp16, q, k and v are rounded to it at this boundary and out is widened back.
/// On the CUDA backend they travel to device memory and back around each call.
class HgcaAttention final : public AttentionBackend {
 public:
  /// Builds the runtime from `options` (model shape included); its Status is returned unchanged.
  static Status create(const Options& options, std::unique_ptr<HgcaAttention>* out);

  Status add_sequence(SeqId id) override { return runtime_->add_sequence(id); }
  Status release_sequence(SeqId id) override { return runtime_->release_sequence(id); }
  Status begin_step(std::span<const SeqId> seq_ids, std::span<const int32_t> n_new) override;
  Status attend(int32_t layer, std::span<const float> q, std::span<const float> k, std::span<const float> v,
                std::span<float> out) override;
  Status end_step() override;

  Runtime& runtime() { return *runtime_; }

 private:
  explicit HgcaAttention(std::unique_ptr<Runtime> runtime) : runtime_(std::move(runtime)) {}
  /// One runtime call on tensors in the runtime's dtype, in host memory.
  Status call(int32_t layer, const void* q, const void* k, const void* v, void* out);

  std::unique_ptr<Runtime> runtime_;
  devmem::Stream stream_;  // CUDA backend only
  devmem::DeviceBuffer q_dev_, k_dev_, v_dev_, out_dev_;
  bool in_step_ = false;
  int64_t step_tokens_ = 0;
  std::vector<uint16_t> q16_, k16_, v16_, out16_;  // 16-bit staging when dtype is not fp32
};

}  // namespace hgca::model
