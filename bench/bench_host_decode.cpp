// One hybrid decode layer on the host backend against its peer, the same runtime attending to the
// whole history (beta = 0: every store entry selected), at several context lengths. The ratio of
// the two is what sparse selection buys on the CPU before the SIMD engine exists. Inputs are random,
// so attention is flat and beta = 1 keeps much of the store; hgca-decode's synthetic workload has
// the salient tokens that real models show.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "hgca/hgca.hpp"

namespace {

constexpr int32_t kHq = 8, kHkv = 2, kD = 128, kBatch = 2;

std::vector<uint16_t> random_bf16(std::mt19937& rng, std::size_t n) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<uint16_t> out(n);
  for (auto& x : out) {
    const float f = dist(rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    x = static_cast<uint16_t>(u >> 16);
  }
  return out;
}

// Fills a runtime with `context` tokens per sequence (chunked prefill), then times decode steps.
void decode_step(benchmark::State& state, float beta) {
  const auto context = static_cast<int32_t>(state.range(0));
  hgca::Options o;
  o.n_layers = 1;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = hgca::DType::kBFloat16;
  o.beta = beta;
  o.deterministic = true;
  std::unique_ptr<hgca::Runtime> rt;
  if (auto s = hgca::Runtime::create(o, &rt); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  std::mt19937 rng(1);
  std::vector<hgca::SeqId> ids;
  for (int i = 0; i < kBatch; ++i) {
    ids.push_back(static_cast<hgca::SeqId>(i));
    (void)rt->add_sequence(ids.back());
  }
  auto run = [&](int32_t n) {
    const int64_t t = static_cast<int64_t>(n) * kBatch;
    const auto q = random_bf16(rng, t * kHq * kD), k = random_bf16(rng, t * kHkv * kD),
               v = random_bf16(rng, t * kHkv * kD);
    std::vector<uint16_t> out(q.size());
    const std::vector<int32_t> n_new(kBatch, n);
    auto s = rt->begin_step(ids, n_new);
    if (s) s = rt->attention(0, {q.data(), o.dtype, {t, kHq, kD}}, {k.data(), o.dtype, {t, kHkv, kD}},
                             {v.data(), o.dtype, {t, kHkv, kD}}, {out.data(), o.dtype, {t, kHq, kD}});
    if (s) s = rt->end_step();
    return s;
  };
  constexpr int32_t kChunk = 512;
  for (int32_t done = 0; done < context; done += kChunk) {
    if (auto s = run(std::min(kChunk, context - done)); !s) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  for (auto _ : state) {
    if (auto s = run(1); !s) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  hgca::LayerStats st;
  (void)rt->layer_stats(0, &st);
  state.counters["selected_fraction"] = st.selected_fraction;
  state.counters["context"] = context;
}

void BM_HybridDecode(benchmark::State& state) { decode_step(state, 1.0f); }
void BM_ExactDecodePeer(benchmark::State& state) { decode_step(state, 0.0f); }

// Fixed iterations: the fill before the timed loop costs far more than the steps it is there for,
// and Google Benchmark would otherwise repeat it while it searches for an iteration count.
BENCHMARK(BM_HybridDecode)->Arg(1024)->Arg(4096)->Iterations(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExactDecodePeer)->Arg(1024)->Arg(4096)->Iterations(32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
