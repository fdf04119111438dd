// gpu::HostCalls: a host function on a stream holds the stream's later work until it has returned,
// in order, directly and at every launch of a captured graph, in both hand-off modes; poll mode frees
// a direct call's slot once its stream is past it, and falls back to CUDA host functions when all
// slots are taken.
#include "gpu/host_calls.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/stream_gate.hpp"

namespace hgca::gpu {
namespace {

/// What each call does: it counts itself and writes the count into pinned memory, which the stream
/// then copies to the device; the copy reads the word only after the call has returned.
struct Probe {
  std::atomic<int> calls{0};
  int* word = nullptr;  // pinned
  static void run(void* p) {
    auto* probe = static_cast<Probe*>(p);
    *probe->word = probe->calls.fetch_add(1) + 1;
  }
};

class HostCallsTest : public ::testing::TestWithParam<HostHandoff> {
 protected:
  // Few slots, so that a few calls held behind a gate (the stream's queue is finite) use them all.
  static constexpr uint32_t kSlots = 8;
  void SetUp() override {
    ASSERT_TRUE(HostCalls::create(GetParam(), &calls_, kSlots).is_ok());
    ASSERT_EQ(cudaHostAlloc(&probe_.word, sizeof(int), cudaHostAllocDefault), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamSynchronize(stream_);
    calls_.reset();
    if (stream_) cudaStreamDestroy(stream_);
    cudaFreeHost(probe_.word);
  }
  /// `n` calls, each followed by the copy of its word into dev[first + i].
  void enqueue(int n, int* dev, int first, bool captured, bool once = false) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(calls_->launch(stream_, &Probe::run, &probe_, captured, once).is_ok());
      ASSERT_EQ(cudaMemcpyAsync(dev + first + i, probe_.word, sizeof(int), cudaMemcpyHostToDevice, stream_), cudaSuccess);
    }
  }
  std::vector<int> read(const int* dev, int n) {
    std::vector<int> out(static_cast<std::size_t>(n));
    EXPECT_EQ(cudaMemcpy(out.data(), dev, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  std::unique_ptr<HostCalls> calls_;
  Probe probe_;
  cudaStream_t stream_ = nullptr;
};

TEST_P(HostCallsTest, EachCallHoldsTheStreamUntilItHasReturned) {
  if (GetParam() != HostHandoff::kCallback) {
    EXPECT_EQ(calls_->mode(), HostHandoff::kPoll) << "the driver lacks stream memory operations";
  }
  // Calls enqueued behind a closed gate: more than there are slots, so poll mode falls back.
  constexpr int kCalls = 5 * kSlots;
  test::DevBuf<int> dev(kCalls);
  {
    test::StreamGate gate(stream_);
    ASSERT_TRUE(gate.holding());
    enqueue(kCalls, dev.p, 0, false);
    gate.open();
  }
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(probe_.calls.load(), kCalls);
  const std::vector<int> got = read(dev.p, kCalls);
  for (int i = 0; i < kCalls; ++i) ASSERT_EQ(got[i], i + 1) << "copy " << i << " ran before its call returned";
  if (calls_->mode() == HostHandoff::kPoll) {
    EXPECT_GT(calls_->fallbacks(), 0u);
  }
}

TEST_P(HostCallsTest, CapturedCallsRunAtEveryLaunch) {
  constexpr int kPerGraph = 3, kLaunches = 4;
  test::DevBuf<int> dev(kPerGraph);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  enqueue(kPerGraph, dev.p, 0, true);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_EQ(probe_.calls.load(), 0) << "a captured call ran at capture";
  for (int l = 0; l < kLaunches; ++l) {
    ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(probe_.calls.load(), (l + 1) * kPerGraph) << "launch " << l;
    EXPECT_EQ(read(dev.p, kPerGraph), (std::vector<int>{l * kPerGraph + 1, l * kPerGraph + 2, l * kPerGraph + 3}))
        << "launch " << l;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_P(HostCallsTest, DirectCallsFreeTheirSlots) {
  if (calls_->mode() != HostHandoff::kPoll) GTEST_SKIP() << "callback mode has no slots";
  // Rounds of calls in flight that need most slots: with the last round's slots not given back, a
  // round would fall back.
  constexpr int kRound = kSlots - 2;
  test::DevBuf<int> dev(kRound);
  for (int round = 0; round < 4; ++round) {
    {
      test::StreamGate gate(stream_);
      ASSERT_TRUE(gate.holding());
      enqueue(kRound, dev.p, 0, false);
      gate.open();
    }
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (calls_->slots_in_use() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    ASSERT_EQ(calls_->slots_in_use(), 0u) << "round " << round;
  }
  EXPECT_EQ(calls_->fallbacks(), 0u);
  EXPECT_EQ(probe_.calls.load(), 4 * kRound);
}

// Calls captured `once` (a graph per round, launched once, as the runtime's captured steps are):
// their slots come back after the launch, so rounds that need most slots never fall back.
TEST_P(HostCallsTest, CallsCapturedOnceFreeTheirSlotsAfterTheLaunch) {
  if (calls_->mode() != HostHandoff::kPoll) GTEST_SKIP() << "callback mode has no slots";
  constexpr int kRound = kSlots - 2;
  test::DevBuf<int> dev(kRound);
  for (int round = 0; round < 4; ++round) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
    enqueue(kRound, dev.p, 0, true, true);
    ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    EXPECT_EQ(calls_->slots_in_use(), static_cast<uint32_t>(kRound)) << "round " << round << ": held until the launch";
    ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    const std::vector<int> got = read(dev.p, kRound);
    for (int i = 0; i < kRound; ++i) ASSERT_EQ(got[i], round * kRound + i + 1) << "round " << round << ", call " << i;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (calls_->slots_in_use() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    ASSERT_EQ(calls_->slots_in_use(), 0u) << "round " << round;
  }
  EXPECT_EQ(calls_->fallbacks(), 0u);
}

// A graph captured and not launched yet (perhaps never) leaves the thread napping, looking at its
// slot every 100 µs, not spinning: it kept a core busy (2 ms of spinning after each nap, ~0.93 of
// a core); and the call still runs at the launch.
TEST_P(HostCallsTest, AWaitingCapturedCallLeavesTheCoreIdle) {
  if (calls_->mode() != HostHandoff::kPoll) GTEST_SKIP() << "callback mode has no thread of ours";
  test::DevBuf<int> dev(1);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  enqueue(1, dev.p, 0, true);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the spin after the last call
  const auto cpu_seconds = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double c0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(cpu_seconds() - c0, 0.25 * wall) << "the process's CPU time while only a captured call waits";
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(probe_.calls.load(), 1);
  EXPECT_EQ(read(dev.p, 1), std::vector<int>{1});
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

INSTANTIATE_TEST_SUITE_P(Modes, HostCallsTest, ::testing::Values(HostHandoff::kPoll, HostHandoff::kCallback),
                         [](const ::testing::TestParamInfo<HostHandoff>& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace hgca::gpu
