// FlashH2D on random span lists (1 B … 1 MiB, any alignment, pinned or registered sources) and its
// argument checks; and the round trip: KV evicted through the CUDA backend's FlashD2H into the DRAM
// store, gathered back from the store's blocks through FlashH2D, byte for byte what went in.
#include <cuda_runtime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "gpu/flash_h2d.hpp"
#include "harness.hpp"
#include "kvmgr/store.hpp"
#include "runtime_base.hpp"

namespace hgca {
namespace {

using ::testing::HasSubstr;

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

constexpr std::byte kPoison{0xA5};

/// Host memory the GPU reads in place: pinned (cudaHostAlloc), or ordinary pages registered with
/// cudaHostRegister. device() is the address the GPU uses for host().
class HostSource {
 public:
  HostSource(std::size_t bytes, bool registered) : bytes_(bytes), registered_(registered) {
    if (registered) {
      plain_.resize(bytes);
      host_ = plain_.data();
      ok_ = cudaHostRegister(host_, bytes, cudaHostRegisterMapped) == cudaSuccess;
      void* d = nullptr;
      ok_ = ok_ && cudaHostGetDevicePointer(&d, host_, 0) == cudaSuccess;
      device_ = static_cast<std::byte*>(d);
    } else {
      void* p = nullptr;
      ok_ = cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess;
      host_ = device_ = static_cast<std::byte*>(p);
    }
  }
  ~HostSource() {
    if (registered_) {
      cudaHostUnregister(host_);
    } else {
      cudaFreeHost(host_);
    }
  }
  bool ok() const { return ok_; }
  std::byte* host() const { return host_; }
  std::byte* device() const { return device_; }

 private:
  std::size_t bytes_;
  bool registered_;
  bool ok_ = false;
  std::vector<std::byte> plain_;
  std::byte* host_ = nullptr;
  std::byte* device_ = nullptr;
};

struct SpanCase {
  int32_t sms, piece_bytes, spans;
  int64_t max_bytes;
  bool registered;
};

class FlashH2DSpans : public ::testing::TestWithParam<SpanCase> {};

// Random span sizes (log-uniform in [1, max_bytes], some empty), sources and destinations at random
// byte offsets (so src and dst are misaligned to each other as often as not), destinations in
// shuffled order with gaps: every destination byte equals its source byte and every gap keeps its
// poison.
TEST_P(FlashH2DSpans, GathersEveryByteAndNothingElse) {
  const SpanCase c = GetParam();
  std::mt19937_64 rng(c.spans * 31 + c.sms);
  std::vector<int64_t> sizes(static_cast<std::size_t>(c.spans));
  std::uniform_real_distribution<double> log_size(0.0, std::log(static_cast<double>(c.max_bytes)));
  for (auto& s : sizes) s = rng() % 17 == 0 ? 0 : std::max<int64_t>(1, std::llround(std::exp(log_size(rng))));
  sizes[0] = c.max_bytes;  // the largest always appears
  std::vector<int64_t> src_at(sizes.size()), dst_at(sizes.size());
  int64_t src_bytes = 0, dst_bytes = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    src_at[i] = src_bytes + static_cast<int64_t>(rng() % 32);
    src_bytes = src_at[i] + sizes[i];
  }
  std::vector<std::size_t> order(sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i : order) {
    dst_at[i] = dst_bytes + static_cast<int64_t>(rng() % 18);
    dst_bytes = dst_at[i] + sizes[i];
  }

  HostSource src(static_cast<std::size_t>(src_bytes), c.registered);
  ASSERT_TRUE(src.ok()) << "pinned or registered host memory unavailable";
  for (int64_t i = 0; i < src_bytes; ++i) src.host()[i] = static_cast<std::byte>(rng());
  std::byte* dst = nullptr;
  CUDA_OK(cudaMalloc(&dst, static_cast<std::size_t>(dst_bytes)));
  CUDA_OK(cudaMemset(dst, static_cast<int>(kPoison), static_cast<std::size_t>(dst_bytes)));
  std::vector<gpu::H2DSpan> spans;
  std::vector<std::byte> want(static_cast<std::size_t>(dst_bytes), kPoison);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const bool empty = sizes[i] == 0;
    spans.push_back({empty ? nullptr : src.device() + src_at[i], empty ? nullptr : dst + dst_at[i], sizes[i]});
    std::memcpy(want.data() + dst_at[i], src.host() + src_at[i], static_cast<std::size_t>(sizes[i]));
  }
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Status s = gpu::flash_h2d(spans, {c.sms, c.piece_bytes}, stream);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::vector<std::byte> got(want.size());
  CUDA_OK(cudaMemcpyAsync(got.data(), dst, got.size(), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_EQ(std::memcmp(got.data() + dst_at[i], want.data() + dst_at[i], static_cast<std::size_t>(sizes[i])), 0)
        << "span " << i << ": " << sizes[i] << " bytes, src offset " << src_at[i] << ", dst offset " << dst_at[i];
  }
  EXPECT_TRUE(got == want) << "a byte outside every span was written";
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaFree(dst));
}

// 1 B … 1 MiB on 8 SMs; thousands of small spans on one SM with the smallest pieces (several
// launches); registered pageable memory as the source; many SMs over few spans; 64 and 65 spans,
// either side of the calls that launch the kernel with the small parameter block.
INSTANTIATE_TEST_SUITE_P(Lists, FlashH2DSpans,
                         ::testing::Values(SpanCase{8, 16384, 300, 1 << 20, false},
                                           SpanCase{1, 512, 3000, 4096, false},
                                           SpanCase{3, 65536, 60, 1 << 20, true},
                                           SpanCase{16, 1024, 7, 100000, false},
                                           SpanCase{2, 512, 64, 50000, false},
                                           SpanCase{2, 512, 65, 50000, false}),
                         [](const auto& p) { return "case" + std::to_string(p.index); });

// A gather's launches after the first may start in their predecessor's tail: a copy queued after
// the gather must still see every span. The first launch's last piece (its 1360th span, 16 MiB on
// one warp: milliseconds) is still being read when the second launch (a few bytes) may start.
TEST(FlashH2D, LaterWorkOnTheStreamSeesEveryLaunch) {
  constexpr int64_t kSmall = 16, kFirst = 1360, kLong = int64_t{1} << 24, kLast = 4;
  const int64_t bytes = (kFirst - 1) * kSmall + kLong + kLast * kSmall;
  HostSource src(static_cast<std::size_t>(bytes), false);
  ASSERT_TRUE(src.ok()) << "pinned host memory unavailable";
  std::mt19937_64 rng(11);
  for (int64_t i = 0; i < bytes; ++i) src.host()[i] = static_cast<std::byte>(rng());
  std::byte* dst = nullptr;
  CUDA_OK(cudaMalloc(&dst, static_cast<std::size_t>(bytes)));
  CUDA_OK(cudaMemset(dst, static_cast<int>(kPoison), static_cast<std::size_t>(bytes)));
  std::vector<gpu::H2DSpan> spans;
  int64_t at = 0;
  for (int64_t i = 0; i < kFirst + kLast; ++i) {
    const int64_t n = i == kFirst - 1 ? kLong : kSmall;
    spans.push_back({src.device() + at, dst + at, n});
    at += n;
  }
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Status s = gpu::flash_h2d(spans, {1, 1 << 24}, stream);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::vector<std::byte> got(static_cast<std::size_t>(bytes));
  CUDA_OK(cudaMemcpyAsync(got.data(), dst, got.size(), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(std::memcmp(got.data(), src.host(), got.size()), 0) << "the copy after the gather saw a span unwritten";
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaFree(dst));
}

TEST(FlashH2D, BadArgumentsAreNamedAndNothingIsEnqueued) {
  void* src = nullptr;
  std::byte* dst = nullptr;
  CUDA_OK(cudaHostAlloc(&src, 64, cudaHostAllocDefault));
  CUDA_OK(cudaMalloc(&dst, 64));
  CUDA_OK(cudaMemset(dst, static_cast<int>(kPoison), 64));
  std::memset(src, 1, 64);
  const auto expect_error = [&](std::vector<gpu::H2DSpan> spans, gpu::FlashH2DConfig config, const char* what) {
    const Status s = gpu::flash_h2d(spans, config, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
    EXPECT_THAT(s.message(), HasSubstr(what));
  };
  const gpu::H2DSpan good{src, dst, 16};
  expect_error({good, {src, dst + 16, -3}}, {}, "spans[1].bytes = -3, expected ≥ 0");
  expect_error({good, {nullptr, dst + 16, 4}}, {}, "spans[1].src is null");
  expect_error({good, {src, nullptr, 4}}, {}, "spans[1].dst is null");
  expect_error({good}, {0, 16384}, "config.sms = 0");
  expect_error({good}, {100000, 16384}, "config.sms = 100000");
  expect_error({good}, {8, 1000}, "config.piece_bytes = 1000");
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::byte> got(64);
  CUDA_OK(cudaMemcpy(got.data(), dst, 64, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, std::vector<std::byte>(64, kPoison)) << "a rejected list must not copy its good spans";
  CUDA_OK(cudaFreeHost(src));
  CUDA_OK(cudaFree(dst));
}

/// The address the GPU uses for store memory at host address p: the CUDA backend registered the
/// store's chunks (mapped), so this fails only if it did not.
const std::byte* device_address(const std::byte* p) {
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, const_cast<std::byte*>(p), 0) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return static_cast<const std::byte*>(d);
}

struct RoundTripCase {
  DType dtype;
  int32_t hq, hkv, d, window_blocks, block_tokens;
  bool deterministic;
};

class FlashRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

// Decode steps and prompts longer than the window over three sequences (windows wrap; their tails
// leave block alignment), selection on: then a random list of store blocks (K and V; whole blocks or
// random parts of them), shuffled, is gathered back through FlashH2D into one device buffer at
// unaligned offsets.
TEST_P(FlashRoundTrip, EvictedThroughFlashD2HGatheredBackThroughFlashH2D) {
  const RoundTripCase c = GetParam();
  Options o;
  o.n_layers = 2;
  o.n_q_heads = c.hq;
  o.n_kv_heads = c.hkv;
  o.head_dim = c.d;
  o.dtype = c.dtype;
  o.window_blocks = c.window_blocks;
  o.block_tokens = c.block_tokens;
  o.beta = 1.0f;
  o.min_keep = 2;
  o.reeval_min_tokens = 9;
  o.deterministic = c.deterministic;
  o.threads = 2;
  test::Harness h(o, 23);
  const std::vector<SeqId> ids{4, 7, 9};
  for (SeqId id : ids) h.add(id);
  const int32_t w = c.window_blocks * c.block_tokens;
  std::mt19937_64 rng(c.d * 13 + c.hkv);
  for (int step = 0; step < 24; ++step) {
    std::vector<int32_t> n_new;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      n_new.push_back(rng() % 5 == 0 ? 1 + static_cast<int32_t>(rng() % (2 * w + 3)) : 1);
    }
    h.step(ids, n_new);
  }
  ASSERT_TRUE(h.runtime().synchronize().is_ok());

  const auto& base = dynamic_cast<const RuntimeBase&>(h.runtime());
  std::vector<const kvmgr::DramStore*> stores;
  for (SeqId id : ids) {
    for (int32_t l = 0; l < o.n_layers; ++l) {
      const kvmgr::DramStore* store = nullptr;
      ASSERT_TRUE(base.store(id, l, &store).is_ok());
      stores.push_back(store);
    }
  }

  // One piece per (block, K or V): a whole block or a random part of it, with the bytes it must bring.
  struct Piece {
    const std::byte* src;
    std::vector<std::byte> bytes;
    bool partial;  // a part of its block
  };
  const std::size_t head_row = static_cast<std::size_t>(c.d) * dtype_size(c.dtype);
  std::vector<Piece> pieces;
  int64_t blocks = 0;
  for (std::size_t s = 0; s < stores.size(); ++s) {
    const SeqId id = ids[s / o.n_layers];
    const auto layer = static_cast<int32_t>(s % o.n_layers);
    const std::vector<std::byte> k = ref::encode(h.k_history(id, layer), c.dtype);
    const std::vector<std::byte> v = ref::encode(h.v_history(id, layer), c.dtype);
    const kvmgr::DramStore& st = *stores[s];
    for (int32_t head = 0; head < c.hkv; ++head) {
      for (std::size_t b = 0; b < st.store(head).blocks.size(); ++b, ++blocks) {
        int64_t t0 = 0, t1 = c.block_tokens;
        if (rng() % 2 == 0) {
          t0 = static_cast<int64_t>(rng() % c.block_tokens);
          t1 = t0 + 1 + static_cast<int64_t>(rng() % (c.block_tokens - t0));
        }
        for (int kv = 0; kv < 2; ++kv) {
          const auto& block = *st.store(head).blocks[b];
          Piece piece{device_address((kv == 0 ? block.k() : block.v()) + t0 * head_row), {}, t1 - t0 < c.block_tokens};
          ASSERT_NE(piece.src, nullptr) << "store memory is not registered with CUDA";
          for (int64_t t = t0; t < t1; ++t) {  // entry j of the store is token j of the history
            const int64_t j = static_cast<int64_t>(b) * c.block_tokens + t;
            const std::byte* row = (kv == 0 ? k : v).data() + (j * c.hkv + head) * head_row;
            piece.bytes.insert(piece.bytes.end(), row, row + head_row);
          }
          pieces.push_back(std::move(piece));
        }
      }
    }
  }
  // A random list, as a step's context sets ask for: about three pieces in four, in shuffled order.
  std::shuffle(pieces.begin(), pieces.end(), rng);
  pieces.resize(pieces.size() * 3 / 4);
  const auto partial = std::count_if(pieces.begin(), pieces.end(), [](const Piece& x) { return x.partial; });
  std::vector<gpu::H2DSpan> spans;
  std::vector<std::byte> want;
  for (const Piece& piece : pieces) {
    want.resize(want.size() + rng() % 7, kPoison);
    spans.push_back({piece.src, reinterpret_cast<void*>(want.size()), static_cast<int64_t>(piece.bytes.size())});
    want.insert(want.end(), piece.bytes.begin(), piece.bytes.end());
  }
  ASSERT_GT(blocks, 20) << "the steps should have evicted many blocks";
  ASSERT_GT(partial, 0);
  std::byte* dst = nullptr;
  CUDA_OK(cudaMalloc(&dst, want.size()));
  CUDA_OK(cudaMemset(dst, static_cast<int>(kPoison), want.size()));
  for (auto& span : spans) span.dst = dst + reinterpret_cast<uintptr_t>(span.dst);  // offsets so far
  const Status s = gpu::flash_h2d(spans, {4, 4096}, nullptr);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::vector<std::byte> got(want.size());
  CUDA_OK(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(dst));
  EXPECT_TRUE(got == want) << "the gathered store differs from the history that went in";
}

// Every dtype; MHA and GQA; head rows of 16 B (f16, D 8) to 512 B (f32, D 128); windows of one block
// and of odd block sizes; asynchronous re-evaluation in one case.
INSTANTIATE_TEST_SUITE_P(Cases, FlashRoundTrip,
                         ::testing::Values(RoundTripCase{DType::kFloat32, 4, 4, 128, 2, 4, true},
                                           RoundTripCase{DType::kBFloat16, 8, 2, 64, 3, 5, true},
                                           RoundTripCase{DType::kFloat16, 6, 3, 8, 1, 8, false},
                                           RoundTripCase{DType::kBFloat16, 16, 4, 40, 4, 3, true}),
                         [](const auto& p) { return std::string(to_string(p.param.dtype)) + "_" + std::to_string(p.index); });

}  // namespace
}  // namespace hgca
