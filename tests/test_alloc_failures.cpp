// Heap exhaustion anywhere in a call: this program replaces the global operator new, and
// interposes oneTBB's scalable_malloc (the DRAM store's containers, kvmgr/scalable.hpp), so that
// one chosen allocation (the n-th from when a countdown is armed, on any thread, oneTBB's own
// bookkeeping excepted) fails.
// Sweeping n over a runtime's calls reaches the paths no store limit does (selection's scratch,
// the pool's work, re-evaluations, the error messages themselves): each call either succeeds or
// fails having changed nothing, made again it succeeds, and no KV row is lost or stored twice.
// Built for the host backend (hgca_alloc_tests) and for CUDA (hgca_gpu_alloc_tests), where a
// failure once a call's first host function is being launched may instead stop the runtime
// (kInternal, as hgca.hpp documents): that runtime is then given up, not checked.
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "backend.hpp"
#include "hgca/hgca.hpp"
#include "reference/reference.hpp"
#if HGCA_TEST_BACKEND == 2
#include "gpu/device_buffer.hpp"
#endif

namespace {
std::atomic<long> g_countdown{-1};  // -1: no failure armed

/// Whether code at `caller` is oneTBB's own (its scheduler's bookkeeping, on any of its threads). A
/// failure there is not hgca's to handle: on a worker's own stack oneTBB ends the process (seen
/// in 1 of 15 runs on a 16-core host, the stack in libtbb from start_thread; session 44, call 2).
bool in_tbb(const void* caller) {
  Dl_info info;
  return dladdr(caller, &info) != 0 && info.dli_fname && std::strstr(info.dli_fname, "libtbb");
}

/// Whether this allocation, requested by code at `caller`, is the one chosen to fail.
bool chosen(const void* caller) {
  long c = g_countdown.load(std::memory_order_relaxed);
  if (c < 0 || in_tbb(caller)) return false;
  while (c >= 0 && !g_countdown.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) {
  }
  return c == 0;
}

/// A failure that escapes prints the stack std::terminate was called on: where it was thrown when
/// no handler was found, or where unwinding met a noexcept frame (addr2line -e <this program>
/// <+offset> names this program's frames).
[[maybe_unused]] const auto g_where = std::set_terminate([] {
  void* frames[48];
  const int n = backtrace(frames, 48);
  static const char kHead[] = "hgca_alloc_tests: terminate; the stack where it was called:\n";
  (void)!write(2, kHead, sizeof kHead - 1);
  backtrace_symbols_fd(frames, n, 2);
  std::abort();
});
}  // namespace

void* operator new(std::size_t n) {
  if (chosen(__builtin_return_address(0))) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// Found before libtbbmalloc's: null, as scalable_malloc answers when memory runs out (its
// scalable_allocator then throws std::bad_alloc).
extern "C" void* scalable_malloc(std::size_t n) {
  using Malloc = void* (*)(std::size_t);
  static const auto next = reinterpret_cast<Malloc>(dlsym(RTLD_NEXT, "scalable_malloc"));
  return chosen(__builtin_return_address(0)) ? nullptr : next(n);
}
// GCC takes the free() below for a mismatch with `new`; the operator new above is malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

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
  o.backend = test::kBackend;
  o.threads = 2;
  o.deterministic = true;
  return o;
}

/// One step's inputs, and where the backend reads them (device memory for CUDA).
struct StepInputs {
  std::vector<float> q, kv, out;  // K = V
#if HGCA_TEST_BACKEND == 2
  std::unique_ptr<test::DevBuf<float>> q_dev, kv_dev, out_dev;
#endif
  const float* q_at = nullptr;
  const float* kv_at = nullptr;
  float* out_at = nullptr;
};

StepInputs make_inputs(std::mt19937_64& rng, int64_t t) {
  StepInputs in;
  const auto q = ref::normal(rng, t * kHq * kD), k = ref::normal(rng, t * kHkv * kD);
  in.q.assign(q.begin(), q.end());
  in.kv.assign(k.begin(), k.end());
  in.out.assign(static_cast<std::size_t>(t) * kHq * kD, 0.0f);
  in.q_at = in.q.data();
  in.kv_at = in.kv.data();
  in.out_at = in.out.data();
#if HGCA_TEST_BACKEND == 2
  in.q_dev = std::make_unique<test::DevBuf<float>>(in.q.size());
  in.kv_dev = std::make_unique<test::DevBuf<float>>(in.kv.size());
  in.out_dev = std::make_unique<test::DevBuf<float>>(in.out.size());
  EXPECT_EQ(cudaMemcpy(in.q_dev->p, in.q.data(), in.q.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(in.kv_dev->p, in.kv.data(), in.kv.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  in.q_at = in.q_dev->p;
  in.kv_at = in.kv_dev->p;
  in.out_at = in.out_dev->p;
#endif
  return in;
}

/// Makes `call` succeed, with its n-th allocation failing on the first try; returns whether the
/// call made that many (the failure happened, whether or not the call then failed). A failed call
/// must say kOutOfMemory; the tries after it (nothing armed) may first report, once, memory that
/// ran out where an earlier call went on without it. *stopped: the runtime stopped (kInternal,
/// CUDA backend only).
bool succeed_with_failure_at(long n, const std::function<Status()>& call, int* failed_calls, bool* stopped) {
  g_countdown.store(n);
  Status s = call();
  const bool reached = g_countdown.exchange(-1) < 0;
  *failed_calls += s.is_ok() ? 0 : 1;
  for (int again = 0; !s && again < 3; ++again) {
    if (test::kBackend == Backend::kCuda && s.code() == StatusCode::kInternal) {
      *stopped = true;
      return reached;
    }
    EXPECT_EQ(s.code(), StatusCode::kOutOfMemory) << s.message();
    s = call();
  }
  EXPECT_TRUE(s.is_ok()) << s.message();
  return reached;
}

TEST(AllocationFailures, EveryFailedCallChangesNothingAndTheRetryLosesNothing) {
  const Options o = options();
  int failed_calls = 0, stopped_runtimes = 0;
  long n = 0;
  for (bool reached = true; reached && n < 20000; ++n) {
    reached = false;
    bool stopped = false;
    std::unique_ptr<Runtime> rt;
    ASSERT_TRUE(Runtime::create(o, &rt).is_ok());
    const std::vector<SeqId> ids{1, 2};
    for (SeqId id : ids) ASSERT_TRUE(rt->add_sequence(id).is_ok());
    std::vector<std::vector<float>> history(ids.size());  // K = V rows [t, Hkv, D] per sequence
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    // Decode steps, then an append that evicts and re-evaluates: the failure is armed in the last.
    for (int step = 0; step < 6 && !stopped; ++step) {
      const bool armed = step == 5;
      const std::vector<int32_t> n_new = armed ? std::vector<int32_t>{7, 5} : std::vector<int32_t>{3, 2};
      const int64_t t = n_new[0] + n_new[1];
      StepInputs in = make_inputs(rng, t);
      auto begin = [&] { return rt->begin_step(ids, n_new); };
      if (armed) {
        reached |= succeed_with_failure_at(n, begin, &failed_calls, &stopped);
      } else {
        ASSERT_TRUE(begin().is_ok());
      }
      for (int32_t l = 0; l < o.n_layers && !stopped; ++l) {
        auto call = [&] {
          const TensorView kv{in.kv_at, o.dtype, {t, kHkv, kD}};
          return rt->attention(l, {in.q_at, o.dtype, {t, kHq, kD}}, kv, kv, {in.out_at, o.dtype, {t, kHq, kD}});
        };
        if (armed) {
          reached |= succeed_with_failure_at(n, call, &failed_calls, &stopped);
        } else {
          ASSERT_TRUE(call().is_ok());
        }
      }
      if (stopped) break;
      ASSERT_TRUE(rt->end_step().is_ok());
      // Before the inputs go. It may report, once, what ran out in the host side; on the CUDA
      // backend a CPU part that failed stopped the runtime (its call's output is wrong).
      Status synced = rt->synchronize();
      if (test::kBackend == Backend::kCuda && synced.code() == StatusCode::kInternal) {
        stopped = true;
        break;
      }
      if (!synced) {
        EXPECT_EQ(synced.code(), StatusCode::kOutOfMemory) << synced.message();
        synced = rt->synchronize();
      }
      ASSERT_TRUE(synced.is_ok()) << synced.message();
      int64_t row = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto rows = static_cast<std::ptrdiff_t>(n_new[i]) * kHkv * kD;
        history[i].insert(history[i].end(), in.kv.begin() + row, in.kv.begin() + row + rows);
        row += rows;
      }
    }
    if (stopped) {
      ++stopped_runtimes;
      continue;
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (int32_t l = 0; l < o.n_layers; ++l) {
        std::vector<float> k(history[i].size()), v(history[i].size());
        ASSERT_TRUE(rt->read_kv(l, ids[i], k.data(), v.data()).is_ok());
        ASSERT_EQ(k, history[i]) << "failure at allocation " << n << ", sequence " << ids[i] << ", layer " << l;
        ASSERT_EQ(v, history[i]) << "failure at allocation " << n << ", sequence " << ids[i] << ", layer " << l;
      }
    }
  }
  std::printf("[allocation failures] %ld allocations swept, %d calls failed, %d runtimes stopped\n", n, failed_calls,
              stopped_runtimes);
  EXPECT_GT(failed_calls, 10) << "few calls failed";
  EXPECT_LT(stopped_runtimes, failed_calls) << "every failure stopped the runtime";
  EXPECT_LT(n, 20000) << "the sweep never got past the calls' allocations";
}

// add_sequence running out of memory (its windows, its bookkeeping) names itself; the sequence is
// then not there, and adding it again succeeds.
// One sequence at most: a failed add must give back what the backend took for it (the CUDA
// backend's one ring slot), or the retry has none.
TEST(AllocationFailures, AddSequenceSaysWhatRanOut) {
  int failed = 0;
  bool reached = true;
  Options o = options();
  o.max_sequences = 1;
  for (long n = 0; reached && n < 2000; ++n) {
    std::unique_ptr<Runtime> rt;
    ASSERT_TRUE(Runtime::create(o, &rt).is_ok());
    g_countdown.store(n);
    const Status s = rt->add_sequence(3);
    reached = g_countdown.exchange(-1) < 0;
    if (!s) {
      ++failed;
      EXPECT_EQ(s.code(), StatusCode::kOutOfMemory) << s.message();
      EXPECT_NE(s.message().find("add_sequence: "), std::string::npos) << s.message();
      int64_t len = 0;
      EXPECT_EQ(rt->sequence_length(3, &len).code(), StatusCode::kNotFound);
      ASSERT_TRUE(rt->add_sequence(3).is_ok());
    }
  }
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace hgca
