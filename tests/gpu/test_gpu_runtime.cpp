// The CUDA backend as a CUDA op: asynchronous on the caller's stream, capturable into a graph, and
// equal to the host backend; and the zero-copy merge kernel against its fp64 reference.
#include <cuda_runtime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <span>

#include "cpu/pool.hpp"
#include "devmem/devmem.hpp"
#include "gpu/stream_gate.hpp"
#include "harness.hpp"
#include "hgca/hgca.hpp"
#include "merge/merge_cuda.hpp"
#include "reference/reference.hpp"

namespace hgca {
namespace {

using ::testing::HasSubstr;

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

Options small_options(DType dtype) {
  Options o;
  o.n_layers = 3;
  o.n_q_heads = 8;
  o.n_kv_heads = 2;
  o.head_dim = 64;
  o.dtype = dtype;
  o.window_blocks = 2;
  o.block_tokens = 8;  // W = 16: decode steps evict a block every 8 steps
  o.beta = 1.0f;       // real selection: the store and the context sets are in use
  o.min_keep = 3;
  o.reeval_min_tokens = 6;
  o.deterministic = true;
  o.threads = 2;
  o.backend = Backend::kCuda;
  return o;
}

/// Random q, k, v for every layer of one step, in the runtime's dtype (host bytes).
struct StepInputs {
  std::vector<std::vector<std::byte>> q, k, v;
};

StepInputs make_inputs(const Options& o, int64_t tokens, std::mt19937_64& rng) {
  StepInputs in;
  for (int32_t l = 0; l < o.n_layers; ++l) {
    in.q.push_back(ref::encode(ref::normal(rng, tokens * o.n_q_heads * o.head_dim, 1.5), o.dtype));
    in.k.push_back(ref::encode(ref::normal(rng, tokens * o.n_kv_heads * o.head_dim, 1.5), o.dtype));
    in.v.push_back(ref::encode(ref::normal(rng, tokens * o.n_kv_heads * o.head_dim), o.dtype));
  }
  return in;
}

/// A CUDA runtime with its stream and per-layer device tensors; steps are enqueued whole.
class Driver {
 public:
  explicit Driver(const Options& o) : opt_(o) {
    Status s = Runtime::create(o, &rt_);
    EXPECT_TRUE(s.is_ok()) << s.message();
    s = devmem::Stream::create(&stream_);
    EXPECT_TRUE(s.is_ok()) << s.message();
    bufs_.resize(static_cast<std::size_t>(o.n_layers));
  }
  Runtime& rt() { return *rt_; }
  const devmem::Stream& stream() const { return stream_; }

  /// Uploads the inputs, then begin_step, attention for every layer on the stream, end_step. Does
  /// not wait for the stream.
  void enqueue_step(const std::vector<SeqId>& ids, const std::vector<int32_t>& n_new, const StepInputs& in) {
    int32_t failed_layer = -1;
    const Status s = enqueue_calls(ids, n_new, in, &failed_layer);
    ASSERT_TRUE(s.is_ok()) << "layer " << failed_layer << ": " << s.message();
    ASSERT_TRUE(rt_->end_step().is_ok());
  }

  /// enqueue_step up to the first attention call that fails (its layer in *failed_layer), without
  /// end_step. With `deferred`, the first call that fails with kOutOfMemory reporting an earlier
  /// failure (memory running out in an earlier call's host-side work, an error pending on the
  /// thread), having enqueued nothing, leaves that error there and is made again.
  Status enqueue_calls(const std::vector<SeqId>& ids, const std::vector<int32_t>& n_new, const StepInputs& in,
                       int32_t* failed_layer, Status* deferred = nullptr) {
    int64_t t = 0;
    for (int32_t n : n_new) t += n;
    tokens_ = t;
    const DType dt = opt_.dtype;
    const int32_t hq = opt_.n_q_heads, hkv = opt_.n_kv_heads, d = opt_.head_dim;
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      Layer& b = bufs_[l];
      for (auto [buf, bytes] : {std::pair{&b.q, in.q[l].size()}, {&b.k, in.k[l].size()}, {&b.v, in.v[l].size()},
                                {&b.out, in.q[l].size()}}) {
        if (Status s = buf->reserve(bytes); !s) return s;
      }
      if (Status s = b.q.upload(in.q[l].data(), in.q[l].size(), stream_); !s) return s;
      if (Status s = b.k.upload(in.k[l].data(), in.k[l].size(), stream_); !s) return s;
      if (Status s = b.v.upload(in.v[l].data(), in.v[l].size(), stream_); !s) return s;
    }
    if (Status s = stream_.synchronize(); !s) return s;  // uploads are not part of what a graph captures
    if (before_attention) before_attention();
    if (Status s = rt_->begin_step(ids, n_new); !s) return s;
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      Layer& b = bufs_[l];
      auto call = [&] {
        return rt_->attention(l, {b.q.get(), dt, {t, hq, d}}, {b.k.get(), dt, {t, hkv, d}},
                              {b.v.get(), dt, {t, hkv, d}}, {b.out.get(), dt, {t, hq, d}}, nullptr, stream_.get());
      };
      Status s = call();
      if (!s && deferred && deferred->is_ok() && s.code() == StatusCode::kOutOfMemory) {
        *deferred = s;
        s = call();
      }
      if (!s) {
        *failed_layer = l;
        return s;
      }
    }
    return Status::ok();
  }

  /// Every layer's output of the last step (waits for the stream).
  std::vector<std::vector<std::byte>> outputs() {
    std::vector<std::vector<std::byte>> out;
    EXPECT_TRUE(stream_.synchronize().is_ok());
    for (int32_t l = 0; l < opt_.n_layers; ++l) {
      const std::size_t bytes = static_cast<std::size_t>(tokens_ * opt_.n_q_heads * opt_.head_dim) * dtype_size(opt_.dtype);
      out.emplace_back(bytes);
      EXPECT_TRUE(bufs_[l].out.download(out.back().data(), bytes, stream_).is_ok());
    }
    EXPECT_TRUE(stream_.synchronize().is_ok());
    return out;
  }

  std::function<void()> before_attention;

 private:
  struct Layer {
    devmem::DeviceBuffer q, k, v, out;
  };
  Options opt_;
  std::unique_ptr<Runtime> rt_;
  devmem::Stream stream_;
  std::vector<Layer> bufs_;
  int64_t tokens_ = 0;
};

void expect_same_history(Runtime& a, Runtime& b, SeqId id, const Options& o) {
  int64_t len_a = 0, len_b = 0;
  ASSERT_TRUE(a.sequence_length(id, &len_a).is_ok());
  ASSERT_TRUE(b.sequence_length(id, &len_b).is_ok());
  ASSERT_EQ(len_a, len_b);
  const std::size_t bytes = static_cast<std::size_t>(len_a * o.n_kv_heads * o.head_dim) * dtype_size(o.dtype);
  for (int32_t l = 0; l < o.n_layers; ++l) {
    std::vector<std::byte> ka(bytes), va(bytes), kb(bytes), vb(bytes);
    ASSERT_TRUE(a.read_kv(l, id, ka.data(), va.data()).is_ok());
    ASSERT_TRUE(b.read_kv(l, id, kb.data(), vb.data()).is_ok());
    EXPECT_EQ(ka, kb) << "layer " << l;
    EXPECT_EQ(va, vb) << "layer " << l;
    LayerStats sa, sb;
    ASSERT_TRUE(a.layer_stats(l, &sa).is_ok());
    ASSERT_TRUE(b.layer_stats(l, &sb).is_ok());
    EXPECT_EQ(sa.context_tokens, sb.context_tokens) << "layer " << l;
    EXPECT_EQ(sa.store_tokens, sb.store_tokens) << "layer " << l;
  }
}

/// One step of `d` captured into a CUDA graph (the capture begins right before its first attention
/// call) and launched once; the graph is freed once that launch has run.
void enqueue_captured(Driver& d, const std::vector<SeqId>& ids, const std::vector<int32_t>& n_new,
                      const StepInputs& in) {
  auto s = static_cast<cudaStream_t>(d.stream().get());
  d.before_attention = [&] { ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); };
  d.enqueue_step(ids, n_new, in);
  d.before_attention = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaGraphLaunch(exec, s));
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
}

/// Both runtimes' store memory settled between steps (Runtime::synchronize waits for the chunks
/// grown on the way to be registered), for tests that compare two runtimes bit for bit. A chunk grown
/// synchronously is registered later by the store memory's thread, and an overflow plan (auto or
/// always) that finds a context set there leaves it to the CPU, which rounds differently from the
/// GPU: without this, that timing could make two runtimes differ in the last bit.
void settle(Driver& a, Driver& b) {
  ASSERT_TRUE(a.rt().synchronize().is_ok());
  ASSERT_TRUE(b.rt().synchronize().is_ok());
}

// Decode steps captured into CUDA graphs (one graph per step, launched once) give bit-identical
// outputs, stores and context sets to the same steps called directly — across evictions; with the
// overflow policy off, and with every context set attended on the GPU (items written by the plan
// when the graph runs). `graphed_staging`: the captured runtime's staging_limit_bytes (1: its
// layers share 4 staging slots, where the direct one has 2 per layer).
void expect_captured_equal_direct(OverflowMode overflow, int32_t layers = 3,
                                  int64_t graphed_staging = Options{}.staging_limit_bytes) {
  Options o = small_options(DType::kBFloat16);
  o.overflow = overflow;
  o.n_layers = layers;
  Options og = o;
  og.staging_limit_bytes = graphed_staging;
  Driver direct(o), graphed(og);
  const std::vector<SeqId> ids{5, 9};
  for (SeqId id : ids) {
    ASSERT_TRUE(direct.rt().add_sequence(id).is_ok());
    ASSERT_TRUE(graphed.rt().add_sequence(id).is_ok());
  }
  std::mt19937_64 rng(3);
  // Warm-up, called directly on both: a prompt longer than the window, then decode steps.
  for (int step = 0; step < 12; ++step) {
    const std::vector<int32_t> n_new = step == 0 ? std::vector<int32_t>{40, 23} : std::vector<int32_t>{1, 1};
    const StepInputs in = make_inputs(o, n_new[0] + n_new[1], rng);
    direct.enqueue_step(ids, n_new, in);
    graphed.enqueue_step(ids, n_new, in);
    ASSERT_EQ(direct.outputs(), graphed.outputs()) << "warm-up step " << step;
    settle(direct, graphed);
  }
  // 10 decode steps (some evict a block): each captured into a graph, then launched once.
  for (int step = 0; step < 10; ++step) {
    const StepInputs in = make_inputs(o, 2, rng);
    direct.enqueue_step(ids, {1, 1}, in);
    enqueue_captured(graphed, ids, {1, 1}, in);
    ASSERT_EQ(direct.outputs(), graphed.outputs()) << "captured step " << step;
    settle(direct, graphed);
  }
  for (SeqId id : ids) expect_same_history(direct.rt(), graphed.rt(), id, o);
  LayerStats st;
  ASSERT_TRUE(graphed.rt().layer_stats(0, &st).is_ok());
  EXPECT_GT(st.store_tokens, 0);
  EXPECT_LT(st.selected_fraction, 1.0);
  if (overflow == OverflowMode::kAlways) {
    EXPECT_GT(st.overflow_items, 0);
  }
}

TEST(CudaGraph, CapturedDecodeStepsEqualDirectCalls) { expect_captured_equal_direct(OverflowMode::kOff); }
TEST(CudaGraph, CapturedDecodeStepsEqualDirectCallsWithEveryContextSetOnTheGpu) {
  expect_captured_equal_direct(OverflowMode::kAlways);
}
TEST(CudaGraph, CapturedDecodeStepsOnFourSharedStagingSlotsEqualDirectCalls) {
  expect_captured_equal_direct(OverflowMode::kOff, 5, 1);  // layer 4's calls take layer 0's slot
}

// FlashD2H's staging shared by the layers' calls (4 slots for 5 layers: a step's last layer takes
// the slot of its first, and the steps run on without waiting for the runtime) against 2 slots per
// layer: bit-identical outputs, stores and context sets over appends that evict, calls whose rows
// wait in their slot, a prompt far longer than the window, decode steps, and a sequence leaving.
TEST(CudaStaging, FourSharedSlotsGiveTheStepsOfTwoPerLayer) {
  Options o = small_options(DType::kBFloat16);
  o.n_layers = 5;
  o.overflow = OverflowMode::kOff;  // (the overflow plan may find store memory not yet registered)
  Options shared = o;
  shared.staging_limit_bytes = 1;
  Driver per_layer(o), ring(shared);
  std::vector<SeqId> ids{1, 2, 3};
  for (SeqId id : ids) {
    ASSERT_TRUE(per_layer.rt().add_sequence(id).is_ok());
    ASSERT_TRUE(ring.rt().add_sequence(id).is_ok());
  }
  std::mt19937_64 rng(11);
  for (int step = 0; step < 30; ++step) {
    if (step == 15) {
      ASSERT_TRUE(per_layer.rt().release_sequence(ids[0]).is_ok());
      ASSERT_TRUE(ring.rt().release_sequence(ids[0]).is_ok());
      ids.erase(ids.begin());
    }
    std::vector<int32_t> n_new;
    int64_t tokens = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const int kind = static_cast<int>(rng() % 5);
      n_new.push_back(kind == 0 ? 1 + static_cast<int32_t>(rng() % 40) : kind == 1 ? 4 : 1);
      tokens += n_new.back();
    }
    if (step == 3) {  // the slots grow (the ring starts over)
      n_new.assign(ids.size(), 600);
      tokens = 600 * static_cast<int64_t>(ids.size());
    }
    const StepInputs in = make_inputs(o, tokens, rng);
    per_layer.enqueue_step(ids, n_new, in);
    ring.enqueue_step(ids, n_new, in);
    ASSERT_EQ(per_layer.outputs(), ring.outputs()) << "step " << step;
  }
  settle(per_layer, ring);
  for (SeqId id : ids) expect_same_history(per_layer.rt(), ring.rt(), id, o);
}

// The two hand-offs of the streams to the host side (stream memory operations answered by the
// runtime's thread; CUDA host functions) run the same host side: bit-identical outputs, stores and
// context sets over a prompt longer than the window, decode steps that evict, and captured steps.
TEST(CudaHandoff, PollAndCallbackGiveIdenticalSteps) {
  Options o = small_options(DType::kBFloat16);
  o.overflow = OverflowMode::kAlways;
  o.handoff = HostHandoff::kPoll;
  Driver poll(o);
  o.handoff = HostHandoff::kCallback;
  Driver callback(o);
  EXPECT_EQ(poll.rt().handoff(), HostHandoff::kPoll) << "the driver lacks stream memory operations";
  EXPECT_EQ(callback.rt().handoff(), HostHandoff::kCallback);
  const std::vector<SeqId> ids{1, 4};
  for (SeqId id : ids) {
    ASSERT_TRUE(poll.rt().add_sequence(id).is_ok());
    ASSERT_TRUE(callback.rt().add_sequence(id).is_ok());
  }
  std::mt19937_64 rng(17);
  for (int step = 0; step < 24; ++step) {
    const std::vector<int32_t> n_new = step == 0 ? std::vector<int32_t>{37, 20} : std::vector<int32_t>{1, 1};
    const StepInputs in = make_inputs(o, n_new[0] + n_new[1], rng);
    if (step < 16) {
      poll.enqueue_step(ids, n_new, in);
      callback.enqueue_step(ids, n_new, in);
    } else {
      enqueue_captured(poll, ids, n_new, in);
      enqueue_captured(callback, ids, n_new, in);
    }
    ASSERT_EQ(poll.outputs(), callback.outputs()) << "step " << step;
    settle(poll, callback);
  }
  for (SeqId id : ids) expect_same_history(poll.rt(), callback.rt(), id, o);
}

// What a server does between captured decode steps: release a finished sequence, make direct calls
// (a new prompt larger than any step before, which grows the runtime's buffers), capture again. The
// same outputs, stores and context sets as the same steps called directly on another runtime: the
// rows a captured step left staged reach the host windows of the sequences that remain, and none
// is written into a released one.
TEST(CudaGraph, ReleasesDirectCallsAndLargerStepsAfterCapturedSteps) {
  const Options o = small_options(DType::kBFloat16);
  Driver direct(o), graphed(o);
  std::vector<SeqId> ids{3, 8, 11};
  for (SeqId id : ids) {
    ASSERT_TRUE(direct.rt().add_sequence(id).is_ok());
    ASSERT_TRUE(graphed.rt().add_sequence(id).is_ok());
  }
  std::mt19937_64 rng(23);
  auto both = [&](const std::vector<int32_t>& n_new, bool capture, const char* what) {
    int64_t tokens = 0;
    for (int32_t n : n_new) tokens += n;
    const StepInputs in = make_inputs(o, tokens, rng);
    direct.enqueue_step(ids, n_new, in);
    if (capture) {
      enqueue_captured(graphed, ids, n_new, in);
    } else {
      graphed.enqueue_step(ids, n_new, in);
    }
    ASSERT_EQ(direct.outputs(), graphed.outputs()) << what;
    settle(direct, graphed);
  };
  both({40, 23, 30}, false, "prompt");
  for (int step = 0; step < 6; ++step) both({1, 1, 1}, true, "captured decode step");
  // Sequence 8 finishes right after a captured step.
  ASSERT_TRUE(direct.rt().release_sequence(8).is_ok());
  ASSERT_TRUE(graphed.rt().release_sequence(8).is_ok());
  ids = {3, 11};
  for (int step = 0; step < 3; ++step) both({1, 1}, false, "direct decode step after a captured one");
  both({1, 1}, true, "captured decode step");
  ASSERT_TRUE(direct.rt().add_sequence(20).is_ok());
  ASSERT_TRUE(graphed.rt().add_sequence(20).is_ok());
  ids = {3, 11, 20};
  both({1, 1, 120}, false, "a new prompt, larger than any step before, after a captured step");
  for (int step = 0; step < 4; ++step) both({1, 1, 1}, step % 2 == 0, "decode step");
  for (SeqId id : ids) expect_same_history(direct.rt(), graphed.rt(), id, o);
}

// A fresh runtime whose very first attention calls are made inside a stream capture (with lazy
// loading, its kernels would be loaded there unless create() loaded them), then every later step
// captured too, each graph launched once: the same outputs, stores and context sets as the same
// steps called directly on another fresh runtime, which runs second so that the captured runtime's
// calls are the process's first launches of these kernels (ctest runs each test in its own process).
void expect_first_calls_captured_equal_direct(OverflowMode overflow) {
  Options o = small_options(DType::kFloat16);
  o.overflow = overflow;
  Driver graphed(o), direct(o);
  const std::vector<SeqId> ids{2, 7};
  for (SeqId id : ids) {
    ASSERT_TRUE(graphed.rt().add_sequence(id).is_ok());
    ASSERT_TRUE(direct.rt().add_sequence(id).is_ok());
  }
  std::mt19937_64 rng(11);
  // 20 decode steps: the window (W = 16) fills, then evicts a block every 8 steps.
  for (int step = 0; step < 20; ++step) {
    const StepInputs in = make_inputs(o, 2, rng);
    enqueue_captured(graphed, ids, {1, 1}, in);
    const auto captured = graphed.outputs();
    direct.enqueue_step(ids, {1, 1}, in);
    ASSERT_EQ(direct.outputs(), captured) << "step " << step;
    settle(direct, graphed);
  }
  for (SeqId id : ids) expect_same_history(direct.rt(), graphed.rt(), id, o);
  LayerStats st;
  ASSERT_TRUE(graphed.rt().layer_stats(0, &st).is_ok());
  EXPECT_GT(st.store_tokens, 0);
}

TEST(CudaGraph, FreshRuntimesFirstCallsCapturedEqualDirectCalls) {
  expect_first_calls_captured_equal_direct(OverflowMode::kOff);
}
TEST(CudaGraph, FreshRuntimesFirstCallsCapturedEqualDirectCallsWithEveryContextSetOnTheGpu) {
  expect_first_calls_captured_equal_direct(OverflowMode::kAlways);
}

// Store memory running out while decode steps are captured: begin_step, which takes the store
// blocks of every layer's call, fails with kOutOfMemory before any call is captured, every layer
// as it was; the capture stays valid (and empty), and the graphs before it ran with nothing lost.
TEST(CudaGraph, StoreExhaustedWhileStepsAreCapturedFailsBeginStepBeforeAnyCall) {
  Options o = small_options(DType::kBFloat16);
  o.store_chunk_bytes = 64 << 10;
  o.store_limit_bytes = 4 * o.store_chunk_bytes;
  o.beta = 1e9f;  // only min_keep entries selected: the store's blocks run out, not a context cache
  Driver graphed(o);
  const std::vector<SeqId> ids{5, 9};
  for (SeqId id : ids) ASSERT_TRUE(graphed.rt().add_sequence(id).is_ok());
  const auto s = static_cast<cudaStream_t>(graphed.stream().get());
  graphed.before_attention = [&] { ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); };
  // Ends the capture (which fails if a call invalidated it) and runs what it holds, once.
  std::size_t nodes = 0;
  auto run_capture = [&] {
    cudaGraph_t graph = nullptr;
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
    if (nodes > 0) {
      cudaGraphExec_t exec = nullptr;
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      CUDA_OK(cudaGraphLaunch(exec, s));
      CUDA_OK(cudaStreamSynchronize(s));
      CUDA_OK(cudaGraphExecDestroy(exec));
    }
    CUDA_OK(cudaGraphDestroy(graph));
  };
  std::mt19937_64 rng(17);
  for (int step = 0; step < 1000; ++step) {
    std::vector<LayerStats> before(static_cast<std::size_t>(o.n_layers));
    for (int32_t l = 0; l < o.n_layers; ++l) ASSERT_TRUE(graphed.rt().layer_stats(l, &before[l]).is_ok());
    int32_t failed = -1;
    const Status st = graphed.enqueue_calls(ids, {1, 1}, make_inputs(o, 2, rng), &failed);
    run_capture();
    if (HasFatalFailure()) return;
    if (st) {
      ASSERT_TRUE(graphed.rt().end_step().is_ok());
      continue;
    }
    EXPECT_EQ(st.code(), StatusCode::kOutOfMemory) << st.message();
    EXPECT_THAT(st.message(), HasSubstr("begin_step"));
    EXPECT_THAT(st.message(), HasSubstr("store_limit_bytes = 262144"));
    EXPECT_EQ(failed, -1) << "an attention call failed";
    EXPECT_EQ(nodes, 0u) << "a call was captured";
    for (int32_t l = 0; l < o.n_layers; ++l) {
      LayerStats after;
      ASSERT_TRUE(graphed.rt().layer_stats(l, &after).is_ok());
      EXPECT_EQ(after.window_tokens, before[l].window_tokens) << "layer " << l;
      EXPECT_EQ(after.store_tokens, before[l].store_tokens) << "layer " << l;
      EXPECT_EQ(after.context_tokens, before[l].context_tokens) << "layer " << l;
      EXPECT_EQ(after.window_tokens + after.store_tokens, 2 * step) << "layer " << l << ": an entry was lost";
    }
    EXPECT_GT(before[0].store_tokens, 0);
    // Releasing a sequence makes room: the other one's steps are captured and run again.
    ASSERT_TRUE(graphed.rt().release_sequence(5).is_ok());
    failed = -1;
    const Status again = graphed.enqueue_calls({9}, {1}, make_inputs(o, 1, rng), &failed);
    run_capture();
    ASSERT_TRUE(again.is_ok()) << again.message();
    EXPECT_GT(nodes, 0u);
    ASSERT_TRUE(graphed.rt().end_step().is_ok());
    int64_t length = 0;
    ASSERT_TRUE(graphed.rt().sequence_length(9, &length).is_ok());
    EXPECT_EQ(length, step + 1);
    return;
  }
  FAIL() << "the limit was never reached";
}

// Context caches that cannot grow in a scatter (every store entry selected, store memory capped):
// the next call reports kOutOfMemory once, naming the scatter — a later layer's call of the same
// step or synchronize(), whichever comes first after the scatter has run; the stores keep every
// entry, and the runtime goes on: a sequence can be released to make room and the other one
// decodes further.
TEST(CudaErrors, StoreMemoryRunningOutInAScatterIsReportedOnceAndTheRuntimeGoesOn) {
  Options o = small_options(DType::kBFloat16);
  o.beta = 0.0f;  // context caches as long as the stores: they run out in the scatter
  o.store_chunk_bytes = 64 << 10;
  o.store_limit_bytes = 4 << 20;
  Driver d(o);
  const std::vector<SeqId> ids{1, 2};
  for (SeqId id : ids) ASSERT_TRUE(d.rt().add_sequence(id).is_ok());
  std::mt19937_64 rng(29);
  Status reported;
  int step = 0;
  for (; step < 3000 && reported; ++step) {
    int32_t failed_layer = -1;
    const Status s = d.enqueue_calls(ids, {1, 1}, make_inputs(o, 2, rng), &failed_layer, &reported);
    ASSERT_TRUE(s.is_ok()) << "layer " << failed_layer << ": " << s.message();
    ASSERT_TRUE(d.rt().end_step().is_ok());
    // The scatters have run: an error not reported by a call is here. Once one was, this may
    // report the same step's later scatters running out too (each failure once).
    const Status synced = d.rt().synchronize();
    if (reported) reported = synced;
  }
  ASSERT_FALSE(reported.is_ok()) << "store memory never ran out in " << step << " steps";
  EXPECT_EQ(reported.code(), StatusCode::kOutOfMemory) << reported.message();
  EXPECT_THAT(reported.message(), HasSubstr("the store update failed"));
  EXPECT_TRUE(d.rt().synchronize().is_ok()) << "reported more than once";
  for (int32_t l = 0; l < o.n_layers; ++l) {
    LayerStats st;
    ASSERT_TRUE(d.rt().layer_stats(l, &st).is_ok());
    EXPECT_EQ(st.window_tokens + st.store_tokens, 2 * step) << "layer " << l << ": an entry was lost";
  }
  ASSERT_TRUE(d.rt().release_sequence(2).is_ok());
  for (int more = 0; more < 20; ++more) {
    d.enqueue_step({1}, {1}, make_inputs(o, 1, rng));
    if (HasFatalFailure()) return;
    ASSERT_TRUE(d.rt().synchronize().is_ok()) << "step " << more << " after the release";
  }
  int64_t length = 0;
  ASSERT_TRUE(d.rt().sequence_length(1, &length).is_ok());
  EXPECT_EQ(length, step + 20);
  for (int32_t l = 0; l < o.n_layers; ++l) {
    LayerStats st;
    ASSERT_TRUE(d.rt().layer_stats(l, &st).is_ok());
    EXPECT_EQ(st.window_tokens + st.store_tokens, length) << "layer " << l;
  }
}

// An error the caller's own CUDA work left pending on the thread (an allocation that failed,
// unchecked) is reported by the next attention call before it enqueues anything: the error is
// named, and the same call made again gives what a runtime that never saw it gives, the rows of
// the calls before it (still staged: no synchronize between steps) included.
TEST(CudaErrors, AnErrorPendingOnTheThreadIsReportedBeforeTheCallEnqueuesAnything) {
  Options o = small_options(DType::kBFloat16);
  o.overflow = OverflowMode::kOff;  // outputs compared bit for bit without settling between steps
  Driver plain(o), hit(o);
  for (Driver* d : {&plain, &hit}) ASSERT_TRUE(d->rt().add_sequence(1).is_ok());
  std::mt19937_64 rng(31);
  int reported = 0;
  for (int step = 0; step < 30; ++step) {
    const int32_t n = step == 0 ? 21 : 1;
    const StepInputs in = make_inputs(o, n, rng);
    plain.enqueue_step({1}, {n}, in);
    Status pending;
    if (step % 4 == 2) {  // decode steps that evict and steps that do not
      hit.before_attention = [] {
        void* p = nullptr;
        EXPECT_EQ(cudaMalloc(&p, std::size_t{1} << 60), cudaErrorMemoryAllocation);
      };
    }
    int32_t failed_layer = -1;
    ASSERT_TRUE(hit.enqueue_calls({1}, {n}, in, &failed_layer, &pending).is_ok()) << "layer " << failed_layer;
    ASSERT_TRUE(hit.rt().end_step().is_ok());
    hit.before_attention = nullptr;
    if (step % 4 == 2) {
      ASSERT_FALSE(pending.is_ok()) << "step " << step << ": the pending error was not reported";
      EXPECT_EQ(pending.code(), StatusCode::kOutOfMemory);
      EXPECT_THAT(pending.message(), HasSubstr("pending on this thread"));
      EXPECT_THAT(pending.message(), HasSubstr("cudaErrorMemoryAllocation"));
      ++reported;
    } else {
      EXPECT_TRUE(pending.is_ok()) << pending.message();
    }
    ASSERT_EQ(plain.outputs(), hit.outputs()) << "step " << step;
  }
  EXPECT_EQ(reported, 7);
  settle(plain, hit);
  expect_same_history(plain.rt(), hit.rt(), 1, o);
}

// attention() enqueues and returns while the stream is still held by an earlier kernel: the
// calling thread never waits for the GPU or for the CPU's part (decode steps, evictions included).
TEST(CudaAsync, AttentionReturnsWhileTheStreamIsBusy) {
  const Options o = small_options(DType::kFloat16);
  Driver gated(o), plain(o);
  ASSERT_TRUE(gated.rt().add_sequence(1).is_ok());
  ASSERT_TRUE(plain.rt().add_sequence(1).is_ok());
  std::mt19937_64 rng(11);
  for (int step = 0; step < 20; ++step) {
    const int32_t n = step == 0 ? 30 : 1;
    const StepInputs in = make_inputs(o, n, rng);
    plain.enqueue_step({1}, {n}, in);
    if (step == 0) {  // a first prompt may grow the runtime's buffers, which waits: not gated
      gated.enqueue_step({1}, {n}, in);
      ASSERT_EQ(plain.outputs(), gated.outputs());
      settle(plain, gated);
      continue;
    }
    std::unique_ptr<test::StreamGate> gate;
    gated.before_attention = [&] { gate = std::make_unique<test::StreamGate>(gated.stream().get()); };
    gated.enqueue_step({1}, {n}, in);  // would hang here (until the gate times out) if it blocked
    ASSERT_TRUE(gate->holding()) << "the gate kernel was not launched: nothing held the stream";
    EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(gated.stream().get())), cudaErrorNotReady)
        << "the stream was idle once attention() returned: the gate did not hold it";
    gate->open();
    ASSERT_EQ(plain.outputs(), gated.outputs()) << "step " << step;
    EXPECT_FALSE(gate->timed_out()) << "attention() waited for the stream";
    settle(plain, gated);
  }
}

/// A CUDA runtime of `o` with sequence 1's step of 2 new tokens open: the argument
/// checks of attention() below run against it.
void open_two_token_step(const Options& o, std::unique_ptr<Runtime>* rt) {
  ASSERT_TRUE(Runtime::create(o, rt).is_ok());
  ASSERT_EQ((*rt)->backend(), Backend::kCuda);
  ASSERT_TRUE((*rt)->add_sequence(1).is_ok());
  ASSERT_TRUE((*rt)->begin_step(std::vector<SeqId>{1}, std::vector<int32_t>{2}).is_ok());
}

// A kernel's attributes (its shared memory limit, cluster sizes) belong to one device: a runtime on
// a second GPU, made after one on the first, sets its own. (Set once per process, the second
// device's decode kernels launched without their shared memory and every call failed.)
TEST(CudaDevices, RuntimesOnTwoDevicesAreExact) {
  const int devices = cuda_device_count();
  if (devices < 2) GTEST_SKIP() << "needs 2 CUDA devices, found " << devices;
  for (int device : {0, 1}) {
    CUDA_OK(cudaSetDevice(device));
    Options o = small_options(DType::kBFloat16);
    o.head_dim = 128;  // the decode path (its kernels need more than 48 KiB of shared memory)
    o.beta = 0.0f;     // S is the whole store: exact attention
    o.min_keep = 0;
    test::Harness h(o, 7);
    h.add(1);
    h.add(2);
    for (int step = 0; step < 20; ++step) {
      const auto results = h.step({1, 2}, step == 0 ? std::vector<int32_t>{19, 5} : std::vector<int32_t>{1, 1});
      ASSERT_NO_FATAL_FAILURE(test::check_against_reference(results, 4e-3, step)) << "device " << device;
    }
  }
  CUDA_OK(cudaSetDevice(0));
}

TEST(CudaErrors, HostPointersAreRejectedByName) {
  const Options o = small_options(DType::kFloat32);
  std::unique_ptr<Runtime> rt;
  ASSERT_NO_FATAL_FAILURE(open_two_token_step(o, &rt));
  std::vector<float> host(2 * 8 * 64);
  devmem::DeviceBuffer q, kv, out;  // k and v may share memory; out may not share q's
  for (devmem::DeviceBuffer* b : {&q, &kv, &out}) ASSERT_TRUE(b->reserve(host.size() * sizeof(float)).is_ok());
  const DType dt = DType::kFloat32;
  const Status s = rt->attention(0, {q.get(), dt, {2, 8, 64}}, {host.data(), dt, {2, 2, 64}},
                                 {kv.get(), dt, {2, 2, 64}}, {out.get(), dt, {2, 8, 64}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("k = "));
  EXPECT_THAT(s.message(), HasSubstr("pageable host memory"));
  // The runtime is as it was: the same layer can still be attended.
  const Status ok = rt->attention(0, {q.get(), dt, {2, 8, 64}}, {kv.get(), dt, {2, 2, 64}},
                                  {kv.get(), dt, {2, 2, 64}}, {out.get(), dt, {2, 8, 64}});
  EXPECT_TRUE(ok.is_ok()) << ok.message();
}

// Pointers off the 16 bytes the kernels move at a time (lse_out: off a float) are refused by name
// before anything is enqueued: a misaligned access on the device would end the CUDA context. The
// runtime is as it was after each refusal.
TEST(CudaErrors, MisalignedPointersAreRejectedByName) {
  const Options o = small_options(DType::kFloat32);
  std::unique_ptr<Runtime> rt;
  ASSERT_NO_FATAL_FAILURE(open_two_token_step(o, &rt));
  const std::size_t floats = 2 * 8 * 64 + 4;  // room for pointers up to 4 floats past the start
  devmem::DeviceBuffer q, kv, out, lse;
  for (devmem::DeviceBuffer* b : {&q, &kv, &out, &lse}) ASSERT_TRUE(b->reserve(floats * sizeof(float)).is_ok());
  const DType dt = DType::kFloat32;
  auto* const q0 = static_cast<float*>(q.get());
  auto* const kv0 = static_cast<float*>(kv.get());
  auto* const out0 = static_cast<float*>(out.get());
  auto* const lse0 = static_cast<float*>(lse.get());
  auto call = [&](const float* qp, const float* kp, const float* vp, float* op, float* lp, int32_t layer = 0) {
    return rt->attention(layer, {qp, dt, {2, 8, 64}}, {kp, dt, {2, 2, 64}}, {vp, dt, {2, 2, 64}},
                         {op, dt, {2, 8, 64}}, lp);
  };
  const struct {
    const char* name;
    Status status;
  } refused[] = {
      {"q = ", call(q0 + 1, kv0, kv0, out0, nullptr)},
      {"k = ", call(q0, kv0 + 2, kv0, out0, nullptr)},
      {"v = ", call(q0, kv0, kv0 + 3, out0, nullptr)},
      {"out = ", call(q0, kv0, kv0, out0 + 1, nullptr)},
      {"lse_out = ", call(q0, kv0, kv0, out0, reinterpret_cast<float*>(reinterpret_cast<std::byte*>(lse0) + 2))},
  };
  for (const auto& r : refused) {
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.name << r.status.message();
    EXPECT_THAT(r.status.message(), HasSubstr(r.name));
    EXPECT_THAT(r.status.message(), HasSubstr("aligned"));
  }
  // 16-byte aligned pointers past the start of an allocation are fine; the context is intact.
  for (int32_t layer = 0; layer < o.n_layers; ++layer) {
    const Status ok = call(q0 + 4, kv0 + 4, kv0 + 4, out0 + 4, lse0 + 1, layer);
    ASSERT_TRUE(ok.is_ok()) << "layer " << layer << ": " << ok.message();
  }
  ASSERT_TRUE(rt->end_step().is_ok());
  CUDA_OK(cudaDeviceSynchronize());
}

// The runtime knows its device's NUMA nodes from the device's PCI bus id, as hwloc sees it, and
// gpu_local placement keeps every sequence on them.
TEST(CudaNuma, TheDevicesNodesAreGpuLocal) {
  Options o = small_options(DType::kFloat16);
  o.numa_placement = NumaPlacement::kGpuLocal;
  std::unique_ptr<Runtime> rt;
  ASSERT_TRUE(Runtime::create(o, &rt).is_ok());
  int device = -1;
  CUDA_OK(cudaGetDevice(&device));
  char bus_id[32] = {};
  CUDA_OK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  std::shared_ptr<const cpu::Topology> topology;
  ASSERT_TRUE(cpu::Topology::from_machine(&topology).is_ok());
  std::vector<int> near;
  const bool seen = topology->nodes_near_pci(bus_id, &near).is_ok();
  if (!seen) GTEST_LOG_(INFO) << "hwloc does not see the GPU at " << bus_id << ": no node may be GPU-local";
  CpuStats st;
  ASSERT_TRUE(rt->cpu_stats(&st).is_ok());
  ASSERT_EQ(static_cast<int>(st.nodes.size()), topology->node_count());
  for (int n = 0; n < topology->node_count(); ++n) {
    const bool is_near = std::find(near.begin(), near.end(), n) != near.end();
    EXPECT_EQ(st.nodes[static_cast<std::size_t>(n)].gpu_local, seen && is_near) << "node " << n << ", GPU " << bus_id;
  }
  for (SeqId id : {1, 2, 3}) {
    ASSERT_TRUE(rt->add_sequence(id).is_ok());
    int32_t node = -1;
    ASSERT_TRUE(rt->sequence_node(id, &node).is_ok());
    if (seen) {
      EXPECT_NE(std::find(near.begin(), near.end(), node), near.end()) << "sequence " << id;
    }
  }
}

// --- the merge kernel: fp64 reference, empty sides, mapped host memory, many heads ---

struct MergeCase {
  DType dtype;
  int32_t head_dim;
  int64_t rows;
  int sides = 2;  // 3: the window, the CPU and the GPU's sparse part in one launch
};

class MergeKernel : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergeKernel, MatchesTheReferenceReadingTheCpuSideFromMappedMemory) {
  const MergeCase c = GetParam();
  const int64_t n = c.rows * c.head_dim;
  const auto sides = static_cast<std::size_t>(c.sides);
  std::mt19937_64 rng(c.rows);
  std::vector<std::vector<double>> o;
  for (std::size_t i = 0; i < sides; ++i) o.push_back(ref::normal(rng, n));
  std::vector<std::vector<float>> l(sides, std::vector<float>(c.rows));
  std::uniform_real_distribution<double> u(-30.0, 30.0);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < c.rows; ++r) {
    for (auto& side : l) side[r] = static_cast<float>(u(rng));
    switch (r % 7) {  // empty sides, all empty, far apart, equal
      case 1: l[0][r] = -kInf; break;
      case 2: l[1][r] = -kInf; break;
      case 3: for (auto& side : l) side[r] = -kInf; break;
      case 4: l[1][r] = l[0][r] + 100.0f; break;
      case 5: for (auto& side : l) side[r] = l[0][r]; break;
      case 6:  // the window's side far below the CPU's; with 3 sides, the GPU's sparse side empty
        l[0][r] = l[1][r] - 90.0f;
        if (sides == 3) l[2][r] = -kInf;
        break;
      default: break;
    }
  }
  std::vector<std::vector<float>> o32, o_in;
  for (const auto& side : o) o32.emplace_back(side.begin(), side.end());
  // What the kernel gets: an empty side's rows are NaN (garbage that must not reach the result). The
  // reference gets the finite values, which it weighs by 0.
  o_in = o32;
  for (std::size_t s = 0; s < sides; ++s) {
    for (int64_t r = 0; r < c.rows; ++r) {
      if (l[s][r] != -kInf) continue;
      std::fill_n(o_in[s].begin() + r * c.head_dim, c.head_dim, std::numeric_limits<float>::quiet_NaN());
    }
  }
  // Side 1 (the CPU's) in mapped pinned host memory (zero copy), the others in device memory.
  devmem::Stream stream;
  ASSERT_TRUE(devmem::Stream::create(&stream).is_ok());
  std::deque<devmem::DeviceBuffer> dev_o(sides), dev_l(sides);
  float *mob = nullptr, *mlb = nullptr;
  CUDA_OK(cudaHostAlloc(&mob, n * sizeof(float), cudaHostAllocMapped));
  CUDA_OK(cudaHostAlloc(&mlb, c.rows * sizeof(float), cudaHostAllocMapped));
  std::copy(o_in[1].begin(), o_in[1].end(), mob);
  std::copy(l[1].begin(), l[1].end(), mlb);
  std::vector<merge::MergeSide> in;
  for (std::size_t s = 0; s < sides; ++s) {
    if (s == 1) {
      in.push_back({mob, mlb});
      continue;
    }
    ASSERT_TRUE(dev_o[s].reserve(n * sizeof(float)).is_ok());
    ASSERT_TRUE(dev_l[s].reserve(c.rows * sizeof(float)).is_ok());
    ASSERT_TRUE(dev_o[s].upload(o_in[s].data(), n * sizeof(float), stream).is_ok());
    ASSERT_TRUE(dev_l[s].upload(l[s].data(), c.rows * sizeof(float), stream).is_ok());
    in.push_back({static_cast<float*>(dev_o[s].get()), static_cast<float*>(dev_l[s].get())});
  }
  devmem::DeviceBuffer dout, dlse;
  const std::size_t out_bytes = static_cast<std::size_t>(n) * dtype_size(c.dtype);
  ASSERT_TRUE(dout.reserve(out_bytes).is_ok());
  ASSERT_TRUE(dlse.reserve(c.rows * sizeof(float)).is_ok());
  ASSERT_TRUE(dout.fill(0x7F, out_bytes, stream).is_ok());
  ASSERT_TRUE(dlse.fill(0xFF, c.rows * sizeof(float), stream).is_ok());  // NaN: rows the kernel skips show
  const int launched = sides == 2 ? merge::launch_merge_states(in[0].o, in[0].lse, in[1].o, in[1].lse, c.rows,
                                                                c.head_dim, c.dtype, dout.get(),
                                                                static_cast<float*>(dlse.get()), stream.get())
                                  : merge::launch_merge_states(in, c.rows, c.head_dim, c.dtype, dout.get(),
                                                               static_cast<float*>(dlse.get()), stream.get());
  ASSERT_EQ(launched, 0);
  std::vector<std::byte> out(out_bytes);
  std::vector<float> lse(c.rows);
  ASSERT_TRUE(dout.download(out.data(), out_bytes, stream).is_ok());
  ASSERT_TRUE(dlse.download(lse.data(), c.rows * sizeof(float), stream).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  CUDA_OK(cudaFreeHost(mob));
  CUDA_OK(cudaFreeHost(mlb));

  const std::vector<double> got = ref::decode(out, c.dtype);
  const double tol = c.dtype == DType::kFloat32 ? 1e-6 : c.dtype == DType::kFloat16 ? 1e-3 : 8e-3;
  for (int64_t r = 0; r < c.rows; ++r) {
    auto row = [&](std::size_t s) {
      return std::vector<double>(o32[s].begin() + r * c.head_dim, o32[s].begin() + (r + 1) * c.head_dim);
    };
    // Side by side in fp64: merging is associative there, well past the tolerances.
    std::vector<double> want = row(0);
    double want_lse = l[0][r];
    for (std::size_t s = 1; s < sides; ++s) {
      std::vector<double> merged;
      double merged_lse = 0;
      ref::merge(want, want_lse, row(s), l[s][r], merged, merged_lse);
      want = std::move(merged);
      want_lse = merged_lse;
    }
    for (int32_t i = 0; i < c.head_dim; ++i) {
      const double g = got[r * c.head_dim + i];
      ASSERT_FALSE(std::isnan(g)) << "row " << r;
      ASSERT_NEAR(g, want[i], tol * std::max(1.0, std::abs(want[i]))) << "row " << r << " elem " << i;
    }
    if (std::isinf(want_lse)) {
      EXPECT_EQ(lse[r], -kInf) << "row " << r;
    } else {
      EXPECT_NEAR(lse[r], want_lse, 1e-5 * std::max(1.0, std::abs(want_lse))) << "row " << r;
    }
  }
}

TEST(MergeKernel, RefusesOneOrFourSides) {
  const merge::MergeSide sides[4] = {};
  for (const std::size_t count : {std::size_t{1}, std::size_t{4}}) {
    EXPECT_EQ(merge::launch_merge_states(std::span(sides, count), 1, 8, DType::kFloat32, nullptr, nullptr, nullptr),
              static_cast<int>(cudaErrorInvalidValue));
  }
}

// Arguments the kernel cannot take are refused before anything is launched: a misaligned pointer
// would have ended the CUDA context (cudaErrorMisalignedAddress is sticky). A good merge still runs.
TEST(MergeKernel, RefusesBadArgumentsAndLaunchesNothing) {
  devmem::Stream stream;
  ASSERT_TRUE(devmem::Stream::create(&stream).is_ok());
  devmem::DeviceBuffer o, lse, out;
  ASSERT_TRUE(o.reserve(4096).is_ok());
  ASSERT_TRUE(lse.reserve(256).is_ok());
  ASSERT_TRUE(out.reserve(4096).is_ok());
  ASSERT_TRUE(o.fill(0, 4096, stream).is_ok());
  ASSERT_TRUE(lse.fill(0, 256, stream).is_ok());
  const auto* of = static_cast<const float*>(o.get());
  const auto* lf = static_cast<const float*>(lse.get());
  auto* ob = static_cast<std::byte*>(out.get());
  auto merge2 = [&](const float* a, int64_t rows, int32_t d, DType dtype, void* dst) {
    return merge::launch_merge_states(a, lf, of, lf, rows, d, dtype, dst, nullptr, stream.get());
  };
  constexpr int kInvalid = cudaErrorInvalidValue;
  EXPECT_EQ(merge2(of + 1, 2, 8, DType::kFloat32, ob), kInvalid);       // o 4 bytes past 16-byte alignment
  EXPECT_EQ(merge2(of, 2, 8, DType::kFloat32, ob + 8), kInvalid);       // fp32 out: 16-byte stores
  EXPECT_EQ(merge2(of, 2, 8, DType::kBFloat16, ob + 4), kInvalid);      // bf16 out: 8-byte stores
  EXPECT_EQ(merge2(of, -1, 8, DType::kFloat32, ob), kInvalid);
  EXPECT_EQ(merge2(of, 2, 6, DType::kFloat32, ob), kInvalid);
  EXPECT_EQ(merge2(of, 2, 0, DType::kFloat32, ob), kInvalid);
  EXPECT_EQ(merge2(of, 2, 8, static_cast<DType>(7), ob), kInvalid);
  EXPECT_EQ(merge::launch_merge_states(of, nullptr, of, lf, 2, 8, DType::kFloat32, ob, nullptr, stream.get()), kInvalid);
  EXPECT_EQ(merge::launch_merge_states(of, lf, of, lf, 2, 8, DType::kFloat32, ob, reinterpret_cast<float*>(ob + 4098),
                                       stream.get()),
            kInvalid);  // lse_out not 4-byte aligned
  EXPECT_EQ(merge2(of, 2, 8, DType::kBFloat16, ob + 8), 0);             // 8-byte aligned: taken
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// 32 × 32 rows of 128 (the benchmark's shape), head dims 8 and 256, and 70 000 rows: far more rows
// than one block per token could hold.
INSTANTIATE_TEST_SUITE_P(Shapes, MergeKernel,
                         ::testing::Values(MergeCase{DType::kFloat32, 128, 1024}, MergeCase{DType::kBFloat16, 128, 1024},
                                           MergeCase{DType::kFloat16, 8, 333}, MergeCase{DType::kBFloat16, 256, 77},
                                           MergeCase{DType::kFloat32, 64, 70000}, MergeCase{DType::kFloat32, 128, 1024, 3},
                                           MergeCase{DType::kBFloat16, 128, 1024, 3}, MergeCase{DType::kFloat16, 8, 333, 3},
                                           MergeCase{DType::kFloat32, 64, 70000, 3}),
                         [](const auto& p) {
                           return std::string(to_string(p.param.dtype)) + "_d" + std::to_string(p.param.head_dim) +
                                  "_rows" + std::to_string(p.param.rows) + "_sides" + std::to_string(p.param.sides);
                         });

}  // namespace
}  // namespace hgca
