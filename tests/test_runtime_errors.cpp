// Bad inputs: every wrong call gives the right StatusCode and a message naming the argument and its
// value, and leaves the runtime as it was. After each bad call a valid step runs (beta = 0, so the
// output is exact attention over the whole history) and is checked against the fp64 reference, so
// a state corrupted by the bad call would show.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hgca/hgca.hpp"
#include "reference/reference.hpp"

namespace hgca {
namespace {

using ::testing::HasSubstr;

constexpr double kTolerance = 1e-5;  // fp32, relative
constexpr SeqId kScratch = 100;      // a sequence driven by hand, outside the harness
constexpr int32_t kLayers = 2, kHq = 4, kHkv = 2, kD = 8;

Options test_options() {
  Options o;
  o.n_layers = kLayers;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = DType::kFloat32;
  o.window_blocks = 2;
  o.block_tokens = 4;  // W = 8: the warm-up evicts to the store
  o.beta = 0.0f;       // select everything: the output is exact attention over the history
  o.reeval_min_tokens = 8;
  o.backend = Backend::kHost;
  o.threads = 2;
  o.deterministic = true;
  return o;
}

/// Asserts the code and that the message contains every one of `parts`.
void expect_error(const Status& s, StatusCode code, std::initializer_list<const char*> parts) {
  EXPECT_EQ(s.code(), code) << "got " << to_string(s.code()) << ": " << s.message();
  for (const char* p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

struct Views {
  TensorView q, k, v;
  MutableTensorView out;
  float* lse = nullptr;
};

class Errors : public ::testing::Test {
 protected:
  Errors() : h_(test_options(), 7) {}

  void SetUp() override {
    h_.add(1);
    h_.add(2);
    ASSERT_TRUE(rt().add_sequence(kScratch).is_ok());
    scratch_k_.resize(kLayers);
    scratch_v_.resize(kLayers);
    check(h_.step({1, 2}, {12, 5}));  // prefill past the window (and a re-evaluation)
    check(h_.step({1, 2}, {1, 1}));
    begin_scratch(11);
    finish_scratch();
  }

  Runtime& rt() { return h_.runtime(); }

  /// Every layer's output and LSE against the fp64 reference.
  static void check(const std::vector<test::StepResult>& results) {
    ASSERT_EQ(results.size(), static_cast<std::size_t>(kLayers));
    for (std::size_t l = 0; l < results.size(); ++l) {
      EXPECT_LE(ref::relative_error(results[l].out, results[l].ref_out), kTolerance) << "layer " << l;
      const std::vector<double> lse(results[l].lse.begin(), results[l].lse.end());
      EXPECT_LE(ref::relative_error(lse, results[l].ref_lse), kTolerance) << "layer " << l;
    }
  }

  /// A valid step of the harness's sequences, checked against the reference, and the scratch
  /// sequence's stored history checked against what went in.
  void expect_usable() {
    SCOPED_TRACE("valid step after the bad call");
    check(h_.step({2, 1}, {1, 3}));
    check(h_.step({1}, {1}));
    expect_scratch_history();
  }

  // --- the scratch sequence: a step driven by hand, so bad calls can be made inside it ---

  void begin_scratch(int32_t n) {
    n_ = n;
    for (int32_t l = 0; l < kLayers; ++l) {
      q_[l] = ref::round_to(ref::normal(rng_, static_cast<std::size_t>(n) * kHq * kD), DType::kFloat32);
      k_[l] = ref::round_to(ref::normal(rng_, static_cast<std::size_t>(n) * kHkv * kD), DType::kFloat32);
      v_[l] = ref::round_to(ref::normal(rng_, static_cast<std::size_t>(n) * kHkv * kD), DType::kFloat32);
      qb_[l] = ref::encode(q_[l], DType::kFloat32);
      kb_[l] = ref::encode(k_[l], DType::kFloat32);
      vb_[l] = ref::encode(v_[l], DType::kFloat32);
      out_[l].assign(static_cast<std::size_t>(n) * kHq * kD * 4, std::byte{0x7F});
      lse_[l].assign(static_cast<std::size_t>(n) * kHq, std::numeric_limits<float>::quiet_NaN());
      done_[l] = false;
    }
    const SeqId ids[] = {kScratch};
    const int32_t counts[] = {n};
    const Status s = rt().begin_step(ids, counts);
    ASSERT_TRUE(s.is_ok()) << s.message();
  }

  /// Valid views of the scratch step's tensors for `layer`.
  Views views(int32_t layer) {
    const int64_t t = n_;
    return {{qb_[layer].data(), DType::kFloat32, {t, kHq, kD}},
            {kb_[layer].data(), DType::kFloat32, {t, kHkv, kD}},
            {vb_[layer].data(), DType::kFloat32, {t, kHkv, kD}},
            {out_[layer].data(), DType::kFloat32, {t, kHq, kD}},
            lse_[layer].data()};
  }

  /// A call expected to fail: returns its status and checks it wrote nothing.
  Status bad_attention(int32_t layer, const Views& w) {
    const Status s = rt().attention(layer, w.q, w.k, w.v, w.out, w.lse);
    EXPECT_FALSE(s.is_ok());
    for (int32_t l = 0; l < kLayers; ++l) {
      if (done_[l]) continue;
      for (std::byte b : out_[l]) {
        if (b != std::byte{0x7F}) {
          ADD_FAILURE() << "a failed attention call wrote into out of layer " << l;
          break;
        }
      }
      for (float x : lse_[l]) {
        if (!std::isnan(x)) {
          ADD_FAILURE() << "a failed attention call wrote into lse_out of layer " << l;
          break;
        }
      }
    }
    return s;
  }

  /// `packed`: q, k, v, out and lse_out back to back in one buffer, each ending where the next
  /// begins (adjacent is not overlapping), the results copied back to out_ and lse_.
  void attend_scratch(int32_t layer, bool packed = false) {
    if (packed) {
      const std::size_t sizes[] = {qb_[layer].size(), kb_[layer].size(), vb_[layer].size(), out_[layer].size(),
                                   lse_[layer].size() * sizeof(float)};
      std::vector<std::byte> buffer(sizes[0] + sizes[1] + sizes[2] + sizes[3] + sizes[4]);
      std::byte* at[5] = {buffer.data()};
      for (int i = 1; i < 5; ++i) at[i] = at[i - 1] + sizes[i - 1];
      std::copy(qb_[layer].begin(), qb_[layer].end(), at[0]);
      std::copy(kb_[layer].begin(), kb_[layer].end(), at[1]);
      std::copy(vb_[layer].begin(), vb_[layer].end(), at[2]);
      const Views w = views(layer);
      const Status s = rt().attention(layer, {at[0], w.q.dtype, w.q.shape}, {at[1], w.k.dtype, w.k.shape},
                                      {at[2], w.v.dtype, w.v.shape}, {at[3], w.out.dtype, w.out.shape},
                                      reinterpret_cast<float*>(at[4]));
      ASSERT_TRUE(s.is_ok()) << s.message();
      std::copy(at[3], at[3] + sizes[3], out_[layer].begin());
      std::memcpy(lse_[layer].data(), at[4], sizes[4]);
    } else {
      const Views w = views(layer);
      const Status s = rt().attention(layer, w.q, w.k, w.v, w.out, w.lse);
      ASSERT_TRUE(s.is_ok()) << s.message();
    }
    done_[layer] = true;
    auto& kh = scratch_k_[layer];
    auto& vh = scratch_v_[layer];
    kh.insert(kh.end(), k_[layer].begin(), k_[layer].end());
    vh.insert(vh.end(), v_[layer].begin(), v_[layer].end());
    const int64_t len = static_cast<int64_t>(kh.size()) / (kHkv * kD);
    std::vector<double> o, lse;
    ref::attention(q_[layer], n_, kh, vh, len, kHq, kHkv, kD, 1.0 / std::sqrt(double{kD}), o, lse);
    EXPECT_LE(ref::relative_error(ref::decode(out_[layer], DType::kFloat32), o), kTolerance)
        << "scratch layer " << layer;
    const std::vector<double> got_lse(lse_[layer].begin(), lse_[layer].end());
    EXPECT_LE(ref::relative_error(got_lse, lse), kTolerance) << "scratch layer " << layer;
  }

  /// Attends the layers not yet attended, ends the step, checks the scratch history.
  void finish_scratch() {
    for (int32_t l = 0; l < kLayers; ++l) {
      if (!done_[l]) attend_scratch(l);
    }
    const Status s = rt().end_step();
    ASSERT_TRUE(s.is_ok()) << s.message();
    expect_scratch_history();
  }

  void expect_scratch_history() {
    const int64_t len = static_cast<int64_t>(scratch_k_[0].size()) / (kHkv * kD);
    int64_t got_len = -1;
    ASSERT_TRUE(rt().sequence_length(kScratch, &got_len).is_ok());
    EXPECT_EQ(got_len, len);
    for (int32_t l = 0; l < kLayers; ++l) {
      std::vector<std::byte> k(static_cast<std::size_t>(len) * kHkv * kD * 4), v(k.size());
      const Status s = rt().read_kv(l, kScratch, k.data(), v.data());
      ASSERT_TRUE(s.is_ok()) << s.message();
      EXPECT_EQ(k, ref::encode(scratch_k_[l], DType::kFloat32)) << "layer " << l;
      EXPECT_EQ(v, ref::encode(scratch_v_[l], DType::kFloat32)) << "layer " << l;
    }
  }

  test::Harness h_;
  std::mt19937_64 rng_{99};
  int32_t n_ = 0;
  std::vector<double> q_[kLayers], k_[kLayers], v_[kLayers];
  std::vector<std::byte> qb_[kLayers], kb_[kLayers], vb_[kLayers], out_[kLayers];
  std::vector<float> lse_[kLayers];
  bool done_[kLayers] = {};
  std::vector<std::vector<double>> scratch_k_, scratch_v_;
};

// --- attention's tensors ---

TEST_F(Errors, WrongQShape) {
  begin_scratch(2);
  Views w = views(0);
  w.q.shape = {3, 4, 8};
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"q.shape", "[3, 4, 8]", "[2, 4, 8]"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, WrongKShape) {
  begin_scratch(2);
  Views w = views(1);
  w.k.shape = {2, 4, 8};  // Hq instead of Hkv
  expect_error(bad_attention(1, w), StatusCode::kInvalidArgument, {"k.shape", "[2, 4, 8]", "[2, 2, 8]"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, WrongVShape) {
  begin_scratch(2);
  Views w = views(0);
  w.v.shape = {2, 2, 16};
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"v.shape", "[2, 2, 16]", "[2, 2, 8]"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, WrongOutShape) {
  begin_scratch(3);
  Views w = views(0);
  w.out.shape = {2, 4, 8};  // one token short
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"out.shape", "[2, 4, 8]", "[3, 4, 8]"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, WrongDtype) {
  begin_scratch(2);
  Views w = views(0);
  w.q.dtype = DType::kFloat16;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"q.dtype", "f16", "f32"});
  w = views(0);
  w.out.dtype = DType::kBFloat16;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"out.dtype", "bf16", "f32"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, NullData) {
  begin_scratch(2);
  Views w = views(1);
  w.k.data = nullptr;
  expect_error(bad_attention(1, w), StatusCode::kInvalidArgument, {"k.data", "null"});
  w = views(1);
  w.out.data = nullptr;
  expect_error(bad_attention(1, w), StatusCode::kInvalidArgument, {"out.data", "null"});
  w = views(0);
  w.q.data = nullptr;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"q.data", "null"});
  w = views(0);
  w.v.data = nullptr;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"v.data", "null"});
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, OutSharingMemoryWithAnInput) {
  begin_scratch(2);
  Views w = views(0);
  w.out.data = qb_[0].data();  // in place of q
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"out", "overlaps q", "separate buffers"});
  // v's rows copied to the front of one buffer, out starting inside them.
  std::vector<std::byte> shared(4096);
  std::copy(vb_[0].begin(), vb_[0].end(), shared.begin());
  w = views(0);
  w.v.data = shared.data();
  w.out.data = shared.data() + vb_[0].size() - 4;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"out", "overlaps v", "(128 bytes)"});
  w = views(0);
  w.out.data = kb_[0].data() + kb_[0].size() - 4;  // out's first float is k's last
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"out", "overlaps k"});
  w = views(0);
  w.lse = reinterpret_cast<float*>(qb_[0].data());
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"lse_out", "overlaps q"});
  w = views(0);
  w.lse = reinterpret_cast<float*>(out_[0].data()) + 8;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"lse_out", "overlaps out"});
  // Buffers that only touch are separate: the call runs and is exact.
  attend_scratch(0, /*packed=*/true);
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, LayerOutOfRange) {
  begin_scratch(2);
  expect_error(bad_attention(-1, views(0)), StatusCode::kInvalidArgument, {"layer = -1", "[0, 2)"});
  expect_error(bad_attention(2, views(0)), StatusCode::kInvalidArgument, {"layer = 2", "[0, 2)"});
  expect_error(bad_attention(7, views(0)), StatusCode::kInvalidArgument, {"layer = 7"});
  finish_scratch();

  LayerStats st;
  expect_error(rt().layer_stats(7, &st), StatusCode::kInvalidArgument, {"layer = 7"});
  expect_error(rt().layer_stats(-1, &st), StatusCode::kInvalidArgument, {"layer = -1"});
  std::vector<std::byte> buf(4096);
  expect_error(rt().read_kv(2, 1, buf.data(), buf.data()), StatusCode::kInvalidArgument, {"layer = 2"});
  expect_usable();
}

TEST_F(Errors, SameLayerTwiceInOneStep) {
  begin_scratch(2);
  attend_scratch(1);
  const std::vector<std::byte> first_out = out_[1];
  expect_error(bad_attention(1, views(1)), StatusCode::kFailedPrecondition, {"layer = 1", "already"});
  EXPECT_EQ(out_[1], first_out);
  finish_scratch();
  expect_usable();
}

// --- step order ---

TEST_F(Errors, AttentionWithoutBeginStep) {
  begin_scratch(2);  // builds the tensors, then the step is completed
  finish_scratch();
  // The same tensors again, with no step open.
  for (int32_t l = 0; l < kLayers; ++l) {
    out_[l].assign(out_[l].size(), std::byte{0x7F});
    lse_[l].assign(lse_[l].size(), std::numeric_limits<float>::quiet_NaN());
    done_[l] = false;
  }
  expect_error(bad_attention(0, views(0)), StatusCode::kFailedPrecondition, {"attention", "begin_step"});
  expect_usable();
}

TEST_F(Errors, BeginStepTwice) {
  begin_scratch(2);
  const SeqId ids[] = {1};
  const int32_t counts[] = {5};
  expect_error(rt().begin_step(ids, counts), StatusCode::kFailedPrecondition, {"begin_step", "end_step"});
  // The open step is unchanged: its token count is still 2, its sequence still the scratch one.
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, EndStepWithALayerMissing) {
  int64_t before = -1;
  ASSERT_TRUE(rt().sequence_length(kScratch, &before).is_ok());
  begin_scratch(3);
  attend_scratch(1);
  expect_error(rt().end_step(), StatusCode::kFailedPrecondition, {"layer 0", "not attended"});
  // The step is still open and nothing was committed: the length is that before the step.
  int64_t during = -1;
  ASSERT_TRUE(rt().sequence_length(kScratch, &during).is_ok());
  EXPECT_EQ(during, before);
  attend_scratch(0);
  const Status s = rt().end_step();
  ASSERT_TRUE(s.is_ok()) << s.message();
  expect_scratch_history();
  expect_usable();
}

TEST_F(Errors, AbortStepBeforeTheFirstAttention) {
  int64_t before = -1;
  ASSERT_TRUE(rt().sequence_length(kScratch, &before).is_ok());
  std::vector<StoreMemoryStats> memory_before, memory_after;
  ASSERT_TRUE(rt().store_memory_stats(&memory_before).is_ok());
  begin_scratch(3);  // the caller's tensors hold 2 tokens: n_new was wrong
  std::vector<StoreMemoryStats> memory_during;
  ASSERT_TRUE(rt().store_memory_stats(&memory_during).is_ok());
  ASSERT_GT(memory_during[0].used_bytes, memory_before[0].used_bytes) << "begin_step reserved no store blocks";
  Views w = views(0);
  w.q.shape[0] = w.k.shape[0] = w.v.shape[0] = w.out.shape[0] = 2;
  expect_error(bad_attention(0, w), StatusCode::kInvalidArgument, {"q.shape", "[3, 4, 8]"});
  ASSERT_TRUE(rt().abort_step().is_ok());
  // As before begin_step: the length, the store blocks the step had taken given back, and a step
  // can be begun (sequences added and released too).
  int64_t after = -1;
  ASSERT_TRUE(rt().sequence_length(kScratch, &after).is_ok());
  EXPECT_EQ(after, before);
  ASSERT_TRUE(rt().store_memory_stats(&memory_after).is_ok());
  ASSERT_EQ(memory_after.size(), memory_before.size());
  for (std::size_t i = 0; i < memory_after.size(); ++i) EXPECT_EQ(memory_after[i].used_bytes, memory_before[i].used_bytes);
  expect_error(rt().abort_step(), StatusCode::kFailedPrecondition, {"abort_step", "no step"});
  ASSERT_TRUE(rt().add_sequence(55).is_ok());
  ASSERT_TRUE(rt().release_sequence(55).is_ok());
  begin_scratch(2);
  finish_scratch();
  expect_usable();
}

TEST_F(Errors, AbortStepAfterALayerWasAttended) {
  begin_scratch(2);
  attend_scratch(1);
  expect_error(rt().abort_step(), StatusCode::kFailedPrecondition, {"abort_step", "layer 1", "end_step"});
  finish_scratch();  // the step goes on
  expect_usable();
}

TEST_F(Errors, EndStepWithoutAStep) {
  expect_error(rt().end_step(), StatusCode::kFailedPrecondition, {"end_step", "no step"});
  expect_usable();
  expect_error(rt().end_step(), StatusCode::kFailedPrecondition, {"end_step"});
  expect_usable();
}

// --- begin_step's batch ---

TEST_F(Errors, UnknownSequenceInBeginStep) {
  const SeqId ids[] = {1, 42};
  const int32_t counts[] = {1, 1};
  expect_error(rt().begin_step(ids, counts), StatusCode::kNotFound, {"seq_ids[1] = 42"});
  expect_usable();  // no step is open after the failed begin_step
}

TEST_F(Errors, DuplicateSequenceInBeginStep) {
  const SeqId ids[] = {2, 1, 2};
  const int32_t counts[] = {1, 1, 1};
  expect_error(rt().begin_step(ids, counts), StatusCode::kInvalidArgument, {"seq_ids[2] = 2", "twice"});
  expect_usable();
}

TEST_F(Errors, NewTokenCountBelowOne) {
  const SeqId ids[] = {1, 2};
  const int32_t zero[] = {1, 0};
  expect_error(rt().begin_step(ids, zero), StatusCode::kInvalidArgument, {"n_new[1] = 0"});
  expect_usable();
  const int32_t negative[] = {-3, 1};
  expect_error(rt().begin_step(ids, negative), StatusCode::kInvalidArgument, {"n_new[0] = -3"});
  expect_usable();
}

TEST_F(Errors, NewTokenCountBeyondMemoryIsNamed) {
  // Room for INT32_MAX new rows per layer cannot be had: the error says which count asked for it.
  const SeqId ids[] = {1, 2};
  const int32_t huge[] = {1, std::numeric_limits<int32_t>::max()};
  expect_error(rt().begin_step(ids, huge), StatusCode::kOutOfMemory, {"begin_step", "n_new[1] = 2147483647"});
  expect_usable();
}

TEST_F(Errors, NewTokenCountSizeMismatch) {
  const SeqId ids[] = {1, 2};
  const int32_t counts[] = {1};
  expect_error(rt().begin_step(ids, counts), StatusCode::kInvalidArgument, {"n_new.size() = 1", "expected 2"});
  expect_usable();
}

TEST_F(Errors, EmptyBatch) {
  expect_error(rt().begin_step({}, {}), StatusCode::kInvalidArgument, {"seq_ids", "empty"});
  expect_usable();
}

// --- sequences ---

TEST_F(Errors, AddExistingSequence) {
  expect_error(rt().add_sequence(1), StatusCode::kInvalidArgument, {"seq_id = 1", "exists"});
  expect_error(rt().add_sequence(kScratch), StatusCode::kInvalidArgument, {"seq_id = 100"});
  expect_usable();  // sequence 1 kept its history (the reference would differ otherwise)
}

TEST_F(Errors, AddAndReleaseInsideAStep) {
  begin_scratch(2);
  expect_error(rt().add_sequence(42), StatusCode::kFailedPrecondition, {"add_sequence", "42", "step is open"});
  expect_error(rt().release_sequence(1), StatusCode::kFailedPrecondition, {"release_sequence", "1", "step is open"});
  expect_error(rt().release_sequence(kScratch), StatusCode::kFailedPrecondition, {"release_sequence", "100"});
  attend_scratch(0);
  expect_error(rt().add_sequence(43), StatusCode::kFailedPrecondition, {"add_sequence", "43"});
  finish_scratch();
  int64_t len = -1;
  expect_error(rt().sequence_length(42, &len), StatusCode::kNotFound, {"seq_id = 42"});
  expect_error(rt().sequence_length(43, &len), StatusCode::kNotFound, {"seq_id = 43"});
  EXPECT_TRUE(rt().sequence_length(1, &len).is_ok());
  EXPECT_EQ(len, 13);  // 12 + 1 from the warm-up
  expect_usable();
}

TEST_F(Errors, ReleaseUnknownSequence) {
  expect_error(rt().release_sequence(42), StatusCode::kNotFound, {"seq_id = 42"});
  expect_usable();
}

TEST_F(Errors, ReadUnknownSequence) {
  std::vector<std::byte> k(4096), v(4096);
  expect_error(rt().read_kv(0, 42, k.data(), v.data()), StatusCode::kNotFound, {"seq_id = 42"});
  expect_error(rt().read_kv(0, 1, nullptr, v.data()), StatusCode::kInvalidArgument, {"read_kv: k_out is null"});
  expect_error(rt().read_kv(0, 1, k.data(), nullptr), StatusCode::kInvalidArgument, {"read_kv: v_out is null"});
  int64_t len = -7;
  expect_error(rt().sequence_length(42, &len), StatusCode::kNotFound, {"seq_id = 42"});
  EXPECT_EQ(len, -7);
  expect_usable();
}

TEST_F(Errors, ReleasedSequenceIsUnknown) {
  h_.release(2);
  const SeqId ids[] = {2};
  const int32_t counts[] = {1};
  expect_error(rt().begin_step(ids, counts), StatusCode::kNotFound, {"seq_ids[0] = 2"});
  expect_error(rt().release_sequence(2), StatusCode::kNotFound, {"seq_id = 2"});
  // The id can be used again, from an empty history.
  h_.add(2);
  int64_t len = -1;
  ASSERT_TRUE(rt().sequence_length(2, &len).is_ok());
  EXPECT_EQ(len, 0);
  expect_usable();
}

// --- create() ---

struct CreateCase {
  const char* name;
  void (*mutate)(Options&);
  StatusCode code;
  std::vector<const char*> parts;
};

TEST(ErrorsCreate, RejectsBadOptions) {
  const CreateCase cases[] = {
      {"head_dim 12", [](Options& o) { o.head_dim = 12; }, StatusCode::kUnsupported, {"head_dim = 12"}},
      {"head_dim 0", [](Options& o) { o.head_dim = 0; }, StatusCode::kInvalidArgument, {"head_dim = 0"}},
      {"head_dim 264", [](Options& o) { o.head_dim = 264; }, StatusCode::kUnsupported, {"head_dim = 264", "256"}},
      {"beta -1", [](Options& o) { o.beta = -1.0f; }, StatusCode::kInvalidArgument, {"beta = -1"}},
      {"beta nan", [](Options& o) { o.beta = std::nanf(""); }, StatusCode::kInvalidArgument, {"beta = nan"}},
      {"alpha 0", [](Options& o) { o.alpha = 0.0f; }, StatusCode::kInvalidArgument, {"alpha = 0", "(0, 1]"}},
      {"alpha 1.5", [](Options& o) { o.alpha = 1.5f; }, StatusCode::kInvalidArgument, {"alpha = 1.5"}},
      {"n_kv_heads 3", [](Options& o) { o.n_kv_heads = 3; }, StatusCode::kInvalidArgument,
       {"n_kv_heads = 3", "n_q_heads = 4"}},
      {"window_blocks 0", [](Options& o) { o.window_blocks = 0; }, StatusCode::kInvalidArgument, {"window_blocks = 0"}},
      {"heads_per_task 3", [](Options& o) { o.heads_per_task = 3; }, StatusCode::kInvalidArgument,
       {"heads_per_task = 3", "n_kv_heads = 2"}},
      {"n_layers 0", [](Options& o) { o.n_layers = 0; }, StatusCode::kInvalidArgument, {"n_layers = 0"}},
      {"block_tokens 0", [](Options& o) { o.block_tokens = 0; }, StatusCode::kInvalidArgument, {"block_tokens = 0"}},
      {"threads -1", [](Options& o) { o.threads = -1; }, StatusCode::kInvalidArgument, {"threads = -1"}},
      {"sm_scale -1", [](Options& o) { o.sm_scale = -1.0f; }, StatusCode::kInvalidArgument, {"sm_scale = -1"}},
  };
  for (const CreateCase& c : cases) {
    SCOPED_TRACE(c.name);
    Options o = test_options();
    c.mutate(o);
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    EXPECT_EQ(s.code(), c.code) << s.message();
    EXPECT_EQ(s.message().rfind(std::string("create: ") + c.parts[0], 0), 0u) << s.message();  // as every call's, named
    for (const char* p : c.parts) EXPECT_THAT(s.message(), HasSubstr(p));
    EXPECT_EQ(rt, nullptr);
  }
}

TEST(ErrorsCreate, CudaBackendNeedsCudaAndAGpu) {
  Options o = test_options();
  o.backend = Backend::kCuda;
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(o, &rt);
  if (built_with_cuda() && cuda_device_count() > 0) {
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_EQ(rt->backend(), Backend::kCuda);
    return;
  }
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("backend = cuda"));
  EXPECT_THAT(s.message(), HasSubstr(built_with_cuda() ? "no usable CUDA device" : "this build has no CUDA"));
  EXPECT_EQ(rt, nullptr);
}

TEST(ErrorsCreate, BadHandoffIsNamed) {
  Options o = test_options();
  o.handoff = static_cast<HostHandoff>(7);
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("handoff = 7, expected auto, poll or callback"));
  EXPECT_EQ(rt, nullptr);
}

TEST(ErrorsCreate, BadStoreWritesIsNamed) {
  Options o = test_options();
  o.store_writes = static_cast<StoreWrites>(3);
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("store_writes = 3, expected auto, cached or streamed"));
  EXPECT_EQ(rt, nullptr);
}

TEST(ErrorsCreate, NonPositiveStagingLimitIsNamed) {
  for (const int64_t bytes : {int64_t{0}, int64_t{-1}}) {
    Options o = test_options();
    o.staging_limit_bytes = bytes;
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("staging_limit_bytes = " + std::to_string(bytes) + ", expected > 0"));
    EXPECT_EQ(rt, nullptr);
  }
}

TEST(ErrorsCreate, NullOut) {
  const Status s = Runtime::create(test_options(), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("out"));
}

TEST(ErrorsCreate, BoundariesAreAccepted) {
  const std::vector<void (*)(Options&)> ok = {
      [](Options& o) { o.head_dim = 8; },
      [](Options& o) { o.head_dim = 256; },
      [](Options& o) { o.alpha = 1.0f; },
      [](Options& o) { o.beta = 0.0f; },
      [](Options& o) { o.heads_per_task = 2; },
      [](Options& o) { o.window_blocks = 1; o.block_tokens = 1; },
      [](Options& o) { o.n_kv_heads = 4; o.heads_per_task = 4; },
      [](Options& o) { o.n_kv_heads = 1; },
  };
  for (std::size_t i = 0; i < ok.size(); ++i) {
    Options o = test_options();
    ok[i](o);
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    EXPECT_TRUE(s.is_ok()) << "case " << i << ": " << s.message();
    EXPECT_NE(rt, nullptr);
  }
}

}  // namespace
}  // namespace hgca
