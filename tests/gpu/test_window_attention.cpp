// The CUDA dense window attention against the fp64 reference: o, LSE, the new tokens' MAW
// observations and the ring's blended MAW, over dtypes, GQA groups, head dims, ragged batches,
// wrapped rings, prefills longer than the window, launch splitting and graph capture.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/window_attention.hpp"
#include "reference/reference.hpp"

namespace hgca::gpu {
namespace {

// Tolerances (inputs are exact in fp32 for every dtype, so all dtypes share them; the kernels
// accumulate in fp32 against an fp64 reference on the same rounded inputs):
constexpr double kOutAbs = 2e-5, kOutRel = 1e-4;   // o: |Δ| ≤ abs + rel·|ref|
constexpr double kLseAbs = 2e-5, kLseRel = 1e-5;   // lse
constexpr double kObsAbs = 1e-7, kObsRel = 2e-4;   // a and the blended MAW

bool have_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

struct SeqSpec {
  int32_t w, n, tail;
};

struct Case {
  DType dtype = DType::kBFloat16;
  int32_t group = 1, head_dim = 64, hkv = 2, capacity = 64;
  std::vector<SeqSpec> seqs;
  bool workspace = true;  // false: pass none (the decode path must fall back)
  bool graph = false;     // capture the call in a CUDA graph and replay it
  std::optional<WindowAttentionPath> path;  // the kernels the call must take, when it matters
  int32_t tail_sequences = 0;  // of the plan's second launch (cluster path), checked with `path`
  int32_t min_slices = 0;      // the plan's slices at least this many, checked with `path`
  uint64_t seed = 1;
  std::string name() const {
    return std::string(to_string(dtype)) + " G" + std::to_string(group) + " D" +
           std::to_string(head_dim) + " Hkv" + std::to_string(hkv) + " W" + std::to_string(capacity);
  }
};

/// Largest error seen per dtype as a fraction of its tolerance, printed at the end.
struct MaxErr {
  double o = 0, lse = 0, obs = 0;
};
MaxErr g_err[3];

using test::DevBuf;

void run_case(const Case& c) {
  SCOPED_TRACE(c.name());
  std::mt19937_64 rng(c.seed);
  const int32_t hkv = c.hkv, hq = c.group * hkv, d = c.head_dim, cap = c.capacity;
  const auto nseq = static_cast<int32_t>(c.seqs.size());
  const int32_t n_rings = nseq + 1;  // ring 0 belongs to no sequence: it must stay untouched
  const double sm_scale = 1.0 / std::sqrt(double(d));
  const float alpha = 0.25f;
  int64_t total = 0;
  int32_t max_w = 0, max_new = 0;
  for (const auto& s : c.seqs) {
    total += s.n;
    max_w = std::max(max_w, s.w);
    max_new = std::max(max_new, s.n);
  }

  const std::size_t ring_elems = std::size_t(n_rings) * hkv * cap * d;
  const auto ring_k = ref::round_to(ref::normal(rng, ring_elems, 1.5), c.dtype);
  const auto ring_v = ref::round_to(ref::normal(rng, ring_elems), c.dtype);
  const auto q = ref::round_to(ref::normal(rng, total * hq * d, 1.5), c.dtype);
  const auto k_new = ref::round_to(ref::normal(rng, total * hkv * d, 1.5), c.dtype);
  const auto v_new = ref::round_to(ref::normal(rng, total * hkv * d), c.dtype);
  std::vector<float> maw0(std::size_t(n_rings) * hkv * cap);
  std::uniform_real_distribution<float> u01(0.0f, 0.05f);
  for (auto& x : maw0) x = u01(rng);

  std::vector<WindowSeq> seqs(nseq);
  int64_t row = 0, obs = 0;
  for (int32_t i = 0; i < nseq; ++i) {
    seqs[i] = WindowSeq{row, obs, c.seqs[i].n, c.seqs[i].w, c.seqs[i].tail, i + 1};
    row += c.seqs[i].n;
    obs += int64_t{hkv} * c.seqs[i].n;
  }

  auto upload = [&](const std::vector<double>& v, DevBuf<std::byte>& dst) {
    const auto bytes = ref::encode(v, c.dtype);
    return cudaMemcpy(dst.p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  };
  const std::size_t es = dtype_size(c.dtype);
  DevBuf<std::byte> d_rk(ring_elems * es), d_rv(ring_elems * es), d_q(q.size() * es),
      d_kn(k_new.size() * es), d_vn(v_new.size() * es);
  CUDA_OK(upload(ring_k, d_rk));
  CUDA_OK(upload(ring_v, d_rv));
  CUDA_OK(upload(q, d_q));
  CUDA_OK(upload(k_new, d_kn));
  CUDA_OK(upload(v_new, d_vn));
  DevBuf<float> d_maw(maw0.size()), d_o(total * hq * d), d_lse(total * hq), d_obs(obs);
  CUDA_OK(cudaMemcpy(d_maw.p, maw0.data(), maw0.size() * 4, cudaMemcpyHostToDevice));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto poison = [&](DevBuf<float>& b) {
    std::vector<float> v(b.n, nan);
    return cudaMemcpy(b.p, v.data(), v.size() * 4, cudaMemcpyHostToDevice);
  };
  CUDA_OK(poison(d_o));
  CUDA_OK(poison(d_lse));
  CUDA_OK(poison(d_obs));

  WindowAttentionParams p;
  p.dtype = c.dtype;
  p.n_q_heads = hq;
  p.n_kv_heads = hkv;
  p.head_dim = d;
  p.capacity = cap;
  p.sm_scale = static_cast<float>(sm_scale);
  p.alpha = alpha;
  p.q = d_q.p;
  p.k_new = d_kn.p;
  p.v_new = d_vn.p;
  p.ring_k = d_rk.p;
  p.ring_v = d_rv.p;
  p.ring_maw = d_maw.p;
  p.o = d_o.p;
  p.lse = d_lse.p;
  p.obs_new = d_obs.p;
  p.seqs = seqs.data();
  p.batch = nseq;
  const std::size_t ws = c.workspace ? window_attention_workspace_bytes(p, total, max_w, max_new) : 0;
  DevBuf<std::byte> d_ws(ws);
  p.workspace = d_ws.p;
  p.workspace_bytes = ws;
  if (c.path) {
    const WindowAttentionPlan plan = window_attention_plan(p);
    EXPECT_EQ(static_cast<int>(plan.path), static_cast<int>(*c.path));
    EXPECT_EQ(plan.tail_sequences, c.tail_sequences);
    EXPECT_GE(plan.slices, c.min_slices);
  }

  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (c.graph) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const int rc = launch_window_attention(p, stream);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    ASSERT_EQ(rc, 0) << cudaGetErrorString(static_cast<cudaError_t>(rc));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    const int rc = launch_window_attention(p, stream);
    ASSERT_EQ(rc, 0) << cudaGetErrorString(static_cast<cudaError_t>(rc));
    CUDA_OK(cudaStreamSynchronize(stream));
  }
  CUDA_OK(cudaStreamDestroy(stream));

  std::vector<float> o(d_o.n), lse(d_lse.n), obs_new(d_obs.n), maw(d_maw.n);
  CUDA_OK(cudaMemcpy(o.data(), d_o.p, o.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(lse.data(), d_lse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(obs_new.data(), d_obs.p, obs_new.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(maw.data(), d_maw.p, maw.size() * 4, cudaMemcpyDeviceToHost));

  MaxErr& me = g_err[static_cast<int>(c.dtype)];
  std::vector<float> maw_expect = maw0;  // slots outside every window stay bit-identical
  int failures = 0;
  auto check = [&](double got, double ref, double abs_tol, double rel_tol, double& worst,
                   const char* what, int64_t where) {
    const double err = std::abs(got - ref);
    worst = std::max(worst, err / (abs_tol + rel_tol * std::abs(ref)));  // ≤ 1 passes
    if (!(err <= abs_tol + rel_tol * std::abs(ref)) && failures++ < 8)
      ADD_FAILURE() << what << "[" << where << "]: got " << got << ", reference " << ref;
  };
  for (int32_t i = 0; i < nseq; ++i) {
    const WindowSeq& s = seqs[i];
    const int64_t len = s.w + s.n_new;
    std::vector<double> kh(len * hkv * d), vh(len * hkv * d);
    for (int64_t j = 0; j < len; ++j) {
      for (int32_t h = 0; h < hkv; ++h) {
        const double *ks, *vs;
        if (j < s.w) {
          const int64_t base = ((int64_t{s.ring} * hkv + h) * cap + (s.tail + j) % cap) * d;
          ks = &ring_k[base];
          vs = &ring_v[base];
        } else {
          const int64_t base = ((s.q_row + j - s.w) * hkv + h) * d;
          ks = &k_new[base];
          vs = &v_new[base];
        }
        std::copy(ks, ks + d, kh.begin() + (j * hkv + h) * d);
        std::copy(vs, vs + d, vh.begin() + (j * hkv + h) * d);
      }
    }
    const std::vector<double> qs(q.begin() + s.q_row * hq * d,
                                 q.begin() + (s.q_row + s.n_new) * hq * d);
    std::vector<double> ro, rl;
    ref::attention(qs, s.n_new, kh, vh, len, hq, hkv, d, sm_scale, ro, rl);
    for (std::size_t e = 0; e < ro.size(); ++e)
      check(o[s.q_row * hq * d + e], ro[e], kOutAbs, kOutRel, me.o, "o", s.q_row * hq * d + e);
    for (std::size_t e = 0; e < rl.size(); ++e)
      check(lse[s.q_row * hq + e], rl[e], kLseAbs, kLseRel, me.lse, "lse", s.q_row * hq + e);
    for (int32_t h = 0; h < hkv; ++h) {
      std::vector<double> qg(std::size_t(s.n_new) * c.group * d), kg(len * d);
      for (int32_t r = 0; r < s.n_new; ++r)
        for (int32_t g = 0; g < c.group; ++g)
          std::copy_n(qs.begin() + (int64_t{r} * hq + h * c.group + g) * d, d,
                      qg.begin() + (int64_t{r} * c.group + g) * d);
      for (int64_t j = 0; j < len; ++j)
        std::copy_n(kh.begin() + (j * hkv + h) * d, d, kg.begin() + j * d);
      const auto a = ref::maw_observation(qg, s.n_new, c.group, kg, len, d, sm_scale, s.w);
      for (int64_t j = 0; j < len; ++j) {
        if (j < s.w) {
          const int64_t slot = (int64_t{s.ring} * hkv + h) * cap + (s.tail + j) % cap;
          maw_expect[slot] = static_cast<float>((1.0 - alpha) * maw0[slot] + alpha * a[j]);
        } else {
          const int64_t at = s.obs_offset + int64_t{h} * s.n_new + (j - s.w);
          check(obs_new[at], a[j], kObsAbs, kObsRel, me.obs, "obs_new", at);
        }
      }
    }
  }
  for (std::size_t e = 0; e < maw.size(); ++e) {
    double unused = 0;
    check(maw[e], maw_expect[e], kObsAbs, kObsRel, unused, "ring_maw", int64_t(e));
  }
  // Nothing may stay poisoned or turn NaN (the checks above fail on NaN too; say it plainly).
  auto nans = [](const std::vector<float>& v) { return std::count_if(v.begin(), v.end(), [](float x) { return std::isnan(x); }); };
  EXPECT_EQ(nans(o) + nans(lse) + nans(obs_new) + nans(maw), 0);
  // Non-trivial output (a kernel writing zeros everywhere must not pass).
  double norm = 0;
  for (float x : o) norm += double(x) * x;
  EXPECT_GT(norm, 0.0);
}

// ---- the sweep: dtype × group × head dim, a decode batch and an append batch each ----

using SweepParam = std::tuple<DType, int32_t, int32_t>;
class WindowAttentionSweep : public ::testing::TestWithParam<SweepParam> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device (cudaGetDeviceCount failed or is 0)";
  }
};

TEST_P(WindowAttentionSweep, DecodeRaggedWrapped) {
  Case c;
  std::tie(c.dtype, c.group, c.head_dim) = GetParam();
  c.capacity = 80;
  // Two slices of the longest sequence, as one cluster (the empty window's second is empty).
  if (c.dtype != DType::kFloat32 && (c.head_dim == 64 || c.head_dim == 128 || c.head_dim == 256))
    c.path = WindowAttentionPath::kDecodeCluster;
  // empty window, partial, full and wrapped, one short of full and wrapped at the last slot
  c.seqs = {{0, 1, 0}, {37, 1, 5}, {80, 1, 50}, {79, 1, 79}};
  run_case(c);
}

TEST_P(WindowAttentionSweep, AppendRaggedPrefillBeyondWindow) {
  Case c;
  std::tie(c.dtype, c.group, c.head_dim) = GetParam();
  c.capacity = 80;
  c.seed = 2;
  // append 7 over a full wrapped window, a prefill longer than the window, a wrapped partial
  // window with one token, a short append, an empty window with one token
  c.seqs = {{80, 7, 13}, {0, 100, 0}, {30, 1, 70}, {50, 3, 0}, {0, 1, 0}};
  run_case(c);
}

INSTANTIATE_TEST_SUITE_P(
    All, WindowAttentionSweep,
    ::testing::Combine(::testing::Values(DType::kFloat32, DType::kFloat16, DType::kBFloat16),
                       ::testing::Values(1, 2, 4, 8), ::testing::Values(8, 24, 64, 128, 256)),
    [](const ::testing::TestParamInfo<SweepParam>& param_info) {
      return std::string(to_string(std::get<0>(param_info.param))) + "_G" +
             std::to_string(std::get<1>(param_info.param)) + "_D" + std::to_string(std::get<2>(param_info.param));
    });

// ---- shapes the sweep does not reach ----

class WindowAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device (cudaGetDeviceCount failed or is 0)";
  }
};

TEST_F(WindowAttention, LongWindowDecodeManySlices) {
  // Many slices of many key tiles, a last tile cut short, wrapped rings: the decode kernel at each
  // head dim, both 16-bit dtypes and group sizes 1, 2, 4, 8. Six (sequence, KV head) pairs fill
  // the GPU best with ~40 short slices (split + combine); without a workspace the same call takes
  // 16 slices in clusters, most of them empty for the 101-key sequence.
  struct Shape {
    DType dtype;
    int32_t group, head_dim;
  };
  for (const Shape& sh : {Shape{DType::kBFloat16, 4, 128}, Shape{DType::kFloat16, 4, 128},
                          Shape{DType::kBFloat16, 1, 128}, Shape{DType::kFloat16, 2, 64},
                          Shape{DType::kBFloat16, 8, 256}, Shape{DType::kFloat16, 8, 128}}) {
    Case c;
    c.dtype = sh.dtype;
    c.group = sh.group;
    c.head_dim = sh.head_dim;
    c.hkv = 2;
    c.capacity = 5000;
    c.seqs = {{5000, 1, 1234}, {4000, 1, 4500}, {100, 1, 0}};
    c.path = WindowAttentionPath::kDecodeCombine;
    run_case(c);
    c.workspace = false;
    c.path = WindowAttentionPath::kDecodeCluster;
    run_case(c);
  }
}

TEST_F(WindowAttention, OddGroupsDecodeAndAppend) {
  for (int32_t g : {3, 5, 6, 7}) {
    Case c;
    c.dtype = DType::kBFloat16;
    c.group = g;
    c.head_dim = 128;
    c.hkv = 1;
    c.capacity = 200;
    c.seqs = {{200, 1, 77}, {13, 1, 190}};
    run_case(c);
    c.seqs = {{200, 5, 77}, {0, 9, 0}};
    run_case(c);
  }
}

TEST_F(WindowAttention, BatchLargerThanOneLaunchDecode) {
  Case c;
  c.dtype = DType::kFloat16;
  c.group = 2;
  c.head_dim = 64;
  c.capacity = 40;
  for (int32_t i = 0; i < 300; ++i) c.seqs.push_back({i % 41, 1, i % 40});
  run_case(c);
}

TEST_F(WindowAttention, BatchLargerThanOneLaunchAppend) {
  Case c;
  c.dtype = DType::kBFloat16;
  c.group = 4;
  c.head_dim = 24;
  c.capacity = 16;
  for (int32_t i = 0; i < 150; ++i) c.seqs.push_back({(i * 7) % 17, 1 + i % 3, (i * 5) % 16});
  run_case(c);
}

TEST_F(WindowAttention, DecodeWithoutWorkspace) {
  // The cluster path needs no workspace; beyond a cluster's slices, the generic path serves.
  Case c;
  c.dtype = DType::kBFloat16;
  c.group = 4;
  c.head_dim = 128;
  c.capacity = 300;
  c.workspace = false;
  c.seqs = {{300, 1, 11}, {5, 1, 0}};
  c.path = WindowAttentionPath::kDecodeCluster;
  run_case(c);
  // More keys than 16 slices of split + combine's 1536 hold: at G 4 the cluster path's slices are
  // longer (1920 keys each here), so its observations run over more than one kMaxSplitKeys run.
  c.hkv = 1;
  c.capacity = 30000;
  c.seqs = {{c.capacity, 1, 4321}};
  run_case(c);
  c.group = 1;
  c.head_dim = 64;
  c.capacity = 16 * 3072;  // with the new token, one key more than 16 of the longest slices hold
  c.seqs = {{c.capacity, 1, 7}};
  c.path = WindowAttentionPath::kGeneric;
  run_case(c);
}

TEST_F(WindowAttention, GenericPathSplitsLongKeys) {
  // Shapes no decode kernel takes (G > 8, a head dim other than 64/128/256, fp32) split each
  // query block's keys into slices and merge them by LSE. Ragged windows, one empty (its new key
  // falls in slice 0, the rest of its slices see nothing) and one wrapped at the last slot.
  Case c;
  c.dtype = DType::kBFloat16;
  c.group = 16;
  c.head_dim = 128;
  c.hkv = 2;
  c.capacity = 3000;
  c.seqs = {{3000, 1, 1234}, {2999, 1, 2999}, {100, 1, 0}, {0, 1, 0}};
  c.path = WindowAttentionPath::kGeneric;
  c.min_slices = 2;
  run_case(c);
  c.graph = true;  // the combine is captured with the attend and observe kernels
  run_case(c);
  c.graph = false;
  // A short append: rows r see keys [0, w + r + 1), cut by the slices' ends; the workspace of a
  // decode launch of two sequences holds fewer slices than the planner would like.
  c.seqs = {{3000, 3, 5}, {40, 2, 0}};
  run_case(c);
  c.group = 12;
  c.hkv = 1;
  c.capacity = 1000;
  c.seqs = {{1000, 1, 999}, {1, 1, 0}};
  run_case(c);
  c.dtype = DType::kFloat16;
  c.group = 1;
  c.head_dim = 24;
  c.hkv = 4;
  c.capacity = 2000;
  c.seqs = {{2000, 1, 17}, {1500, 1, 1999}};
  run_case(c);
  c.dtype = DType::kFloat32;
  c.group = 4;
  c.head_dim = 64;
  run_case(c);
  // Without a workspace: one block per query block over all its keys, as before the split.
  c.workspace = false;
  c.min_slices = 1;
  run_case(c);
}

TEST_F(WindowAttention, GraphCaptureDecodeAndAppend) {
  Case c;
  c.dtype = DType::kBFloat16;
  c.group = 4;
  c.head_dim = 128;
  c.capacity = 300;
  c.graph = true;
  c.seqs = {{300, 1, 11}, {5, 1, 0}};
  c.path = WindowAttentionPath::kDecodeCluster;
  run_case(c);
  c.seqs = {{300, 4, 11}, {5, 1, 0}};
  c.path = WindowAttentionPath::kGeneric;
  run_case(c);
  c.capacity = 5000;  // split + combine (see LongWindowDecodeManySlices)
  c.seqs = {{5000, 1, 1234}, {4000, 1, 4500}, {100, 1, 0}};
  c.path = WindowAttentionPath::kDecodeCombine;
  run_case(c);
}

/// The current device's SM count (the plans depend on the device's residency).
int multiprocessors() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 0;
  return sms;
}

/// The plan of a decode call over `b` full, wrapped windows of `w` entries (nothing launched: the
/// plan reads only the pointers' alignment and the workspace's size).
WindowAttentionPlan full_window_plan(DType dtype, int32_t hq, int32_t hkv, int32_t d, int32_t w,
                                     int32_t b) {
  std::vector<WindowSeq> seqs;
  for (int32_t i = 0; i < b; ++i) seqs.push_back(WindowSeq{i, int64_t{i} * hkv, 1, w, w / 3 + 1, i});
  DevBuf<std::byte> rows(256);
  WindowAttentionParams p;
  p.dtype = dtype;
  p.n_q_heads = hq;
  p.n_kv_heads = hkv;
  p.head_dim = d;
  p.capacity = w;
  p.q = p.k_new = p.v_new = p.ring_k = p.ring_v = rows.p;
  p.seqs = seqs.data();
  p.batch = b;
  const std::size_t ws = window_attention_workspace_bytes(p, b, w, 1);
  DevBuf<std::byte> d_ws(ws);
  p.workspace = d_ws.p;
  p.workspace_bytes = d_ws.p ? ws : 0;
  return window_attention_plan(p);
}

TEST_F(WindowAttention, PlannerTakesTheFasterPathAtBatch16) {
  // The benchmark's batch-16 shapes (bf16, D 128, Hq 32, full windows) where the planner's slack
  // decides, with the path measured faster on the H200 (bench/results/gpu-window/planner-cluster):
  // the cluster path at G 4 and G 8 with W 16384 and at G 1 with W 4096, split + combine at G 8
  // with W 4096. The plan depends on the device's residency, so other devices skip.
  const int sms = multiprocessors();
  if (sms != 132) GTEST_SKIP() << "the plans were measured on the H200 (132 SMs), not " << sms;
  struct Shape {
    int32_t hkv, window;
    WindowAttentionPath path;
  };
  for (const Shape& sh : {Shape{8, 16384, WindowAttentionPath::kDecodeCluster},
                          Shape{4, 16384, WindowAttentionPath::kDecodeCluster},
                          Shape{32, 4096, WindowAttentionPath::kDecodeCluster},
                          Shape{4, 4096, WindowAttentionPath::kDecodeCombine}}) {
    SCOPED_TRACE("Hkv " + std::to_string(sh.hkv) + " W " + std::to_string(sh.window));
    EXPECT_EQ(static_cast<int>(full_window_plan(DType::kBFloat16, 32, sh.hkv, 128, sh.window, 16).path),
              static_cast<int>(sh.path));
  }
}

TEST_F(WindowAttention, PlannerSplitsTheClusterTailAtBatch16) {
  // bf16, D 128, Hq 32, full windows: only G 4 with W 16384 (4 waves of 7-slice clusters on the
  // H200) sends its last sequence to a second launch of 14 slices (plan_tail).
  const int sms = multiprocessors();
  if (sms != 132) GTEST_SKIP() << "the plans were measured on the H200 (132 SMs), not " << sms;
  for (int32_t hkv : {32, 8, 4}) {
    for (int32_t w : {1024, 4096, 16384}) {
      for (int32_t b : {1, 16, 64}) {
        SCOPED_TRACE("batch " + std::to_string(b) + " Hkv " + std::to_string(hkv) + " W " + std::to_string(w));
        const WindowAttentionPlan plan = full_window_plan(DType::kBFloat16, 32, hkv, 128, w, b);
        const bool tail = hkv == 8 && w == 16384 && b == 16;
        EXPECT_EQ(plan.tail_sequences, tail ? 1 : 0);
        EXPECT_EQ(plan.tail_slices, tail ? 14 : 0);
        if (tail) {
          EXPECT_EQ(plan.slices, 7);
        }
      }
    }
  }
}

TEST_F(WindowAttention, ClusterTailLaunchDecode) {
  // The cluster path with its tail launch (the batch's last sequences in a second launch of more
  // slices, started as the first one's blocks end), direct and captured in a graph: the first of
  // these shapes whose plan takes one on this GPU.
  Case c;
  c.dtype = DType::kBFloat16;
  c.group = 8;
  c.head_dim = 64;
  c.hkv = 4;
  c.capacity = 6144;
  c.path = WindowAttentionPath::kDecodeCluster;
  for (int32_t b : {16, 24}) {
    const WindowAttentionPlan plan =
        full_window_plan(c.dtype, c.group * c.hkv, c.hkv, c.head_dim, c.capacity, b);
    if (plan.path != WindowAttentionPath::kDecodeCluster || plan.tail_sequences == 0) continue;
    c.tail_sequences = plan.tail_sequences;
    for (int32_t i = 0; i < b; ++i) c.seqs.push_back({c.capacity, 1, (i * 977 + 5) % c.capacity});
    c.seqs[b - 1].w = 100;  // a shorter sequence in the tail launch, a ragged one before it
    c.seqs[b - 2].w = 3000;
    run_case(c);
    c.graph = true;
    run_case(c);
    return;
  }
  GTEST_SKIP() << "this GPU's plans take no tail launch for these shapes";
}

TEST_F(WindowAttention, RejectsBadShapes) {
  std::vector<WindowSeq> seqs = {WindowSeq{0, 0, 1, 0, 0, 0}};
  float dummy_f = 0;
  WindowAttentionParams p;
  p.dtype = DType::kFloat32;
  p.n_q_heads = 4;
  p.n_kv_heads = 2;
  p.head_dim = 64;
  p.capacity = 8;
  p.q = p.k_new = p.v_new = p.ring_k = p.ring_v = &dummy_f;
  p.ring_maw = p.o = p.lse = p.obs_new = &dummy_f;
  p.seqs = seqs.data();
  p.batch = 1;
  auto rc_with = [&](auto mutate) {
    WindowAttentionParams x = p;
    std::vector<WindowSeq> s = seqs;
    x.seqs = s.data();
    mutate(x, s[0]);
    return launch_window_attention(x, nullptr);
  };
  EXPECT_EQ(rc_with([](auto& x, auto&) { x.head_dim = 12; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto& x, auto&) { x.head_dim = 264; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto& x, auto&) { x.n_q_heads = 3; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto&, auto& s) { s.w = 9; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto&, auto& s) { s.n_new = 0; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto&, auto& s) { s.w = 2; s.tail = 8; }), cudaErrorInvalidValue);
  EXPECT_EQ(rc_with([](auto& x, auto&) { x.batch = 0; }), cudaSuccess);  // nothing to do
}

// Prints the largest error seen per dtype as a fraction of the tolerance (1 = at the limit).
class ErrorReport : public ::testing::Environment {
 public:
  void TearDown() override {
    const char* names[3] = {"f32", "f16", "bf16"};
    for (int i = 0; i < 3; ++i)
      std::printf("[window attention] %s largest error / tolerance: o %.3g lse %.3g obs %.3g\n", names[i],
                  g_err[i].o, g_err[i].lse, g_err[i].obs);
  }
};
const auto* const kReport = ::testing::AddGlobalTestEnvironment(new ErrorReport);

}  // namespace
}  // namespace hgca::gpu
