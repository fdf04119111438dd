// Heap exhaustion anywhere in a call: this program replaces the global operator new so that one
// chosen allocation (the n-th from when a countdown is armed, on any thread) throws std::bad_alloc.
// Sweeping n over a host runtime's calls reaches the paths no store limit does (selection's
// scratch, the pool's work, re-evaluations, the error messages themselves): each call either
// succeeds or fails having changed nothing, made again it succeeds, and no KV row is lost or
// stored twice.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "hgca/hgca.hpp"
#include "reference/reference.hpp"

namespace {
std::atomic<long> g_countdown{-1};  // -1: no failure armed
}  // namespace

void* operator new(std::size_t n) {
  long c = g_countdown.load(std::memory_order_relaxed);
  while (c >= 0 && !g_countdown.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
  }
  if (c == 0) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace hgca {
namespace {

constexpr int32_t kHq = 4, kHkv = 2, kD = 32;

Options options() {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = DType::kFloat32;
  o.window_blocks = 2;
  o.block_tokens = 4;
  o.beta = 1.0f;
  o.min_keep = 2;
  o.reeval_min_tokens = 4;  // appends re-evaluate too
  o.backend = Backend::kHost;
  o.threads = 2;
  o.deterministic = true;
  return o;
}

/// Makes `call` succeed, with its n-th allocation failing on the first try; returns whether the
/// call made that many (the failure happened, whether or not the call then failed). A failed call
/// must say kOutOfMemory; the tries after it (nothing armed) may first report, once, memory that
/// ran out where an earlier call went on without it.
bool succeed_with_failure_at(long n, const std::function<Status()>& call, int* failed_calls) {
  g_countdown.store(n);
  Status s = call();
  const bool reached = g_countdown.exchange(-1) < 0;
  *failed_calls += s.is_ok() ? 0 : 1;
  for (int again = 0; !s && again < 3; ++again) {
    EXPECT_EQ(s.code(), StatusCode::kOutOfMemory) << s.message();
    s = call();
  }
  EXPECT_TRUE(s.is_ok()) << s.message();
  return reached;
}

TEST(AllocationFailures, EveryFailedCallChangesNothingAndTheRetryLosesNothing) {
  const Options o = options();
  int failed_calls = 0;
  long n = 0;
  for (bool reached = true; reached && n < 20000; ++n) {
    reached = false;
    std::unique_ptr<Runtime> rt;
    ASSERT_TRUE(Runtime::create(o, &rt).is_ok());
    const std::vector<SeqId> ids{1, 2};
    for (SeqId id : ids) ASSERT_TRUE(rt->add_sequence(id).is_ok());
    std::vector<std::vector<float>> history(ids.size());  // K = V rows [t, Hkv, D] per sequence
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    // Decode steps, then an append that evicts and re-evaluates: the failure is armed in the last.
    for (int step = 0; step < 6; ++step) {
      const bool armed = step == 5;
      const std::vector<int32_t> n_new = step == 5 ? std::vector<int32_t>{7, 5} : std::vector<int32_t>{3, 2};
      const int64_t t = n_new[0] + n_new[1];
      const auto q = ref::normal(rng, t * kHq * kD), k = ref::normal(rng, t * kHkv * kD);
      const std::vector<float> qf(q.begin(), q.end()), kf(k.begin(), k.end());
      std::vector<float> out(static_cast<std::size_t>(t) * kHq * kD);
      auto begin = [&] { return rt->begin_step(ids, n_new); };
      if (armed) {
        reached |= succeed_with_failure_at(n, begin, &failed_calls);
      } else {
        ASSERT_TRUE(begin().is_ok());
      }
      for (int32_t l = 0; l < o.n_layers; ++l) {
        auto call = [&] {
          const TensorView kv{kf.data(), o.dtype, {t, kHkv, kD}};
          return rt->attention(l, {qf.data(), o.dtype, {t, kHq, kD}}, kv, kv, {out.data(), o.dtype, {t, kHq, kD}});
        };
        if (armed) {
          reached |= succeed_with_failure_at(n, call, &failed_calls);
        } else {
          ASSERT_TRUE(call().is_ok());
        }
      }
      ASSERT_TRUE(rt->end_step().is_ok());
      int64_t row = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto rows = static_cast<std::size_t>(n_new[i]) * kHkv * kD;
        history[i].insert(history[i].end(), kf.begin() + row, kf.begin() + row + static_cast<std::ptrdiff_t>(rows));
        row += static_cast<int64_t>(rows);
      }
    }
    Status synced = rt->synchronize();
    if (!synced) synced = rt->synchronize();  // a report made once
    ASSERT_TRUE(synced.is_ok()) << synced.message();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (int32_t l = 0; l < o.n_layers; ++l) {
        std::vector<float> k(history[i].size()), v(history[i].size());
        ASSERT_TRUE(rt->read_kv(l, ids[i], k.data(), v.data()).is_ok());
        ASSERT_EQ(k, history[i]) << "failure at allocation " << n << ", sequence " << ids[i] << ", layer " << l;
        ASSERT_EQ(v, history[i]) << "failure at allocation " << n << ", sequence " << ids[i] << ", layer " << l;
      }
    }
  }
  EXPECT_GT(failed_calls, 10) << "few calls failed";
  EXPECT_LT(n, 20000) << "the sweep never got past the calls' allocations";
}

}  // namespace
}  // namespace hgca
