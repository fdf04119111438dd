// FlashD2H's CPU side (SparseServe §3.2.2, DESIGN.md step 2): once an attention call's window
// overflow has landed in pinned staging, CPU threads of the pool scatter it into the per-head DRAM
// store, off the streams, while the GPU goes on. One ordered lane of scatters per layer.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace hgca::cpu {

/// How many staging slots the layers' calls of `call_bytes` take in turn (Options::
/// staging_limit_bytes): as many as `limit_bytes` holds, at least 4 (a call's copy then runs while
/// the scatters of the calls before it do), at most 2 per layer (a layer's calls wait for its
/// previous scatter anyway), and never exactly one per layer: every call of a layer then lands in
/// the same slot, and FlashD2H into grown stores at 8 layers ran at 40 GB/s against 48 on 9 or 16
/// slots (bench/results/session33).
inline std::size_t staging_slots(int64_t limit_bytes, std::size_t call_bytes, int32_t layers) {
  const std::size_t fit = static_cast<std::size_t>(limit_bytes) / std::max<std::size_t>(call_bytes, 1);
  const auto l = static_cast<std::size_t>(layers);
  const std::size_t slots = std::min(std::max<std::size_t>(fit, 4), 2 * l);
  return slots == l ? slots + 1 : slots;
}

/// Asynchronous scatters in a oneTBB arena, one lane per layer. A lane runs one scatter at a time,
/// in the order they were started. Its owner waits for the lane before it reads what the last
/// scatter wrote (the next call's context sets) — which is also what holds back the copies that
/// would refill a staging slot while a scatter still reads it: backpressure, never overwrite.
class ScatterLanes {
 public:
  ScatterLanes(int32_t lanes, tbb::task_arena& arena);
  ~ScatterLanes();  // waits for every lane
  ScatterLanes(const ScatterLanes&) = delete;
  ScatterLanes& operator=(const ScatterLanes&) = delete;

  /// Starts `scatter` in the arena after the lane's previous one has finished and returns once it
  /// has (waiting for it if need be). The thread that finishes the previous one runs `scatter`
  /// right after it, so a waiting caller's wake-up does not delay it. `scatter` must not throw; it
  /// may run on any of the arena's threads (or, without memory for the arena's task, on the
  /// calling thread).
  void start(int32_t lane, std::function<void()> scatter);
  /// Blocks until the lane's scatter has finished; returns the seconds waited. The waiting thread
  /// does not work in the arena meanwhile: it would pick up unrelated tasks (a re-evaluation of
  /// several milliseconds) and return late.
  double wait(int32_t lane);
  void wait_all();

 private:
  /// Runs `scatter`, then the lane's next one while there is one (a task of the arena).
  void run(int32_t lane, std::function<void()> scatter);

  tbb::task_arena& arena_;
  std::mutex mutex_;
  std::condition_variable finished_cv_;
  // Per lane, guarded by mutex_: the scatters started and finished (a task runs the lane while
  // they differ), and the one waiting for it (start returns only once its predecessor finished).
  std::vector<uint64_t> started_, finished_;
  std::vector<std::function<void()>> next_;
};

}  // namespace hgca::cpu
