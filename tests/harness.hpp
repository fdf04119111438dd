// Drives a Runtime through steps with random inputs while keeping every sequence's true history,
// so tests can compare outputs with the fp64 reference and the stored KV with what went in.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "backend.hpp"
#include "devmem/devmem.hpp"
#include "hgca/hgca.hpp"
#include "reference/reference.hpp"

namespace hgca::test {

struct StepResult {
  std::vector<double> q;             // [T, Hq, D], as given
  std::vector<double> out, ref_out;  // [T, Hq, D]
  std::vector<float> lse;            // [T, Hq]
  std::vector<double> ref_lse;
};

/// Every layer's output of one step (no NaN, relative error ≤ `tolerance` over the layer and ≤ 2 ×
/// `tolerance` in every (token, head) row) and LSE (1e-5 relative) against the fp64 reference;
/// `step` names the step in the messages. Fatal on the first mismatch: call it inside
/// ASSERT_NO_FATAL_FAILURE.
inline void check_against_reference(const std::vector<StepResult>& results, double tolerance, int step) {
  for (std::size_t l = 0; l < results.size(); ++l) {
    const auto& r = results[l];
    for (double x : r.out) ASSERT_FALSE(std::isnan(x));
    ASSERT_LE(ref::relative_error(r.out, r.ref_out), tolerance) << "step " << step << " layer " << l;
    if (!r.lse.empty()) {
      ASSERT_LE(ref::worst_row_error(r.out, r.ref_out, r.out.size() / r.lse.size()), 2 * tolerance)
          << "step " << step << " layer " << l << ": one (token, head) row";
    }
    for (std::size_t i = 0; i < r.lse.size(); ++i) {
      ASSERT_NEAR(r.lse[i], r.ref_lse[i], 1e-5 * std::max(1.0, std::abs(r.ref_lse[i])))
          << "step " << step << " layer " << l << " row " << i;
    }
  }
}

class Harness {
 public:
  explicit Harness(const Options& options, uint64_t seed = 1) : opt_(options), rng_(seed) {
    opt_.backend = kBackend;
    const Status s = Runtime::create(opt_, &rt_);
    EXPECT_TRUE(s.is_ok()) << s.message();
    if (kBackend == Backend::kCuda) {
      const Status st = devmem::Stream::create(&stream_);
      EXPECT_TRUE(st.is_ok()) << st.message();
    }
  }

  Runtime& runtime() { return *rt_; }
  const Options& options() const { return opt_; }

  void add(SeqId id) {
    ASSERT_TRUE(rt_->add_sequence(id).is_ok());
    for (int32_t l = 0; l < opt_.n_layers; ++l) history_[{id, l}];
  }
  void release(SeqId id) {
    ASSERT_TRUE(rt_->release_sequence(id).is_ok());
    for (int32_t l = 0; l < opt_.n_layers; ++l) history_.erase({id, l});
  }
  const std::vector<double>& k_history(SeqId id, int32_t layer) { return history_[{id, layer}].k; }
  const std::vector<double>& v_history(SeqId id, int32_t layer) { return history_[{id, layer}].v; }

  /// One step over every layer with random q/k/v (`scale` spreads the scores); the reference for
  /// each layer's output is computed over the true history. Returns the per-layer results.
  std::vector<StepResult> step(const std::vector<SeqId>& ids, const std::vector<int32_t>& n_new,
                               double scale = 1.0) {
    std::vector<StepResult> results;
    const Status b = rt_->begin_step(ids, n_new);
    EXPECT_TRUE(b.is_ok()) << b.message();
    int64_t t = 0;
    for (int32_t n : n_new) t += n;
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim;
    const double sm_scale = opt_.sm_scale > 0 ? opt_.sm_scale : 1.0 / std::sqrt(double(d));
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      auto q = ref::round_to(ref::normal(rng_, t * hq * d, scale), opt_.dtype);
      auto k = ref::round_to(ref::normal(rng_, t * hkv * d, scale), opt_.dtype);
      auto v = ref::round_to(ref::normal(rng_, t * hkv * d), opt_.dtype);
      const auto qb = ref::encode(q, opt_.dtype), kb = ref::encode(k, opt_.dtype),
                 vb = ref::encode(v, opt_.dtype);
      // Poison the output so an element the runtime did not write shows.
      std::vector<std::byte> ob(static_cast<std::size_t>(t * hq * d) * dtype_size(opt_.dtype),
                                std::byte{0x7F});
      StepResult res;
      res.lse.assign(static_cast<std::size_t>(t * hq), std::nanf(""));
      call(l, t, qb, kb, vb, ob, res.lse);
      res.out = ref::decode(ob, opt_.dtype);
      res.q = q;

      int64_t row = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        auto& hist = history_[{ids[i], l}];
        const int64_t n = n_new[i];
        hist.k.insert(hist.k.end(), k.begin() + row * hkv * d, k.begin() + (row + n) * hkv * d);
        hist.v.insert(hist.v.end(), v.begin() + row * hkv * d, v.begin() + (row + n) * hkv * d);
        const int64_t len = static_cast<int64_t>(hist.k.size()) / (hkv * d);
        std::vector<double> qs(q.begin() + row * hq * d, q.begin() + (row + n) * hq * d), o, lse;
        ref::attention(qs, n, hist.k, hist.v, len, hq, hkv, d, sm_scale, o, lse);
        res.ref_out.insert(res.ref_out.end(), o.begin(), o.end());
        res.ref_lse.insert(res.ref_lse.end(), lse.begin(), lse.end());
        row += n;
      }
      results.push_back(std::move(res));
    }
    const Status e = rt_->end_step();
    EXPECT_TRUE(e.is_ok()) << e.message();
    return results;
  }

 private:
  /// One attention call; on the CUDA backend through device memory on the harness's stream.
  void call(int32_t l, int64_t t, const std::vector<std::byte>& qb, const std::vector<std::byte>& kb,
            const std::vector<std::byte>& vb, std::vector<std::byte>& ob, std::vector<float>& lse) {
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim;
    const DType dt = opt_.dtype;
    if (kBackend != Backend::kCuda) {
      const Status s = rt_->attention(l, {qb.data(), dt, {t, hq, d}}, {kb.data(), dt, {t, hkv, d}},
                                      {vb.data(), dt, {t, hkv, d}}, {ob.data(), dt, {t, hq, d}}, lse.data());
      EXPECT_TRUE(s.is_ok()) << s.message();
      return;
    }
    devmem::DeviceBuffer q, k, v, o, ls;
    for (auto [buf, bytes] : {std::pair{&q, qb.size()}, {&k, kb.size()}, {&v, vb.size()}, {&o, ob.size()},
                              {&ls, lse.size() * sizeof(float)}}) {
      ASSERT_TRUE(buf->reserve(bytes).is_ok());
    }
    ASSERT_TRUE(q.upload(qb.data(), qb.size(), stream_).is_ok());
    ASSERT_TRUE(k.upload(kb.data(), kb.size(), stream_).is_ok());
    ASSERT_TRUE(v.upload(vb.data(), vb.size(), stream_).is_ok());
    ASSERT_TRUE(o.fill(0x7F, ob.size(), stream_).is_ok());
    ASSERT_TRUE(ls.fill(0xFF, lse.size() * sizeof(float), stream_).is_ok());  // NaN
    const Status s = rt_->attention(l, {q.get(), dt, {t, hq, d}}, {k.get(), dt, {t, hkv, d}},
                                    {v.get(), dt, {t, hkv, d}}, {o.get(), dt, {t, hq, d}},
                                    static_cast<float*>(ls.get()), stream_.get());
    EXPECT_TRUE(s.is_ok()) << s.message();
    ASSERT_TRUE(o.download(ob.data(), ob.size(), stream_).is_ok());
    ASSERT_TRUE(ls.download(lse.data(), lse.size() * sizeof(float), stream_).is_ok());
    ASSERT_TRUE(stream_.synchronize().is_ok());
  }

  struct History {
    std::vector<double> k, v;
  };
  Options opt_;
  std::mt19937_64 rng_;
  std::unique_ptr<Runtime> rt_;
  devmem::Stream stream_;  // CUDA backend only
  std::map<std::pair<SeqId, int32_t>, History> history_;
};

}  // namespace hgca::test
