// FlashD2H's scatter lanes (see flash_d2h.hpp).
#include "cpu/flash_d2h.hpp"

#include <chrono>
#include <new>

namespace hgca::cpu {

ScatterLanes::ScatterLanes(int32_t lanes, tbb::task_arena& arena)
    : arena_(arena),
      started_(static_cast<std::size_t>(lanes), 0),
      finished_(static_cast<std::size_t>(lanes), 0),
      next_(static_cast<std::size_t>(lanes)) {}

ScatterLanes::~ScatterLanes() { wait_all(); }

void ScatterLanes::start(int32_t lane, std::function<void()> scatter) {
  std::unique_lock lock(mutex_);
  finished_cv_.wait(lock, [&] { return !next_[lane]; });  // another caller's scatter waits: after it
  const uint64_t previous = started_[lane]++;
  if (finished_[lane] == previous) {  // the lane is idle: no task runs it
    lock.unlock();
    // Enqueued, not run: the caller (a CUDA host function) returns at once. Without memory for
    // the task, it runs here instead (the rows are never left behind).
    try {
      arena_.enqueue([this, lane, scatter] { run(lane, scatter); });
    } catch (const std::bad_alloc&) {
      run(lane, std::move(scatter));
    }
    return;
  }
  // The lane's task takes it up the moment the previous one ends; we return after that.
  next_[lane] = std::move(scatter);
  finished_cv_.wait(lock, [&] { return finished_[lane] >= previous; });
}

void ScatterLanes::run(int32_t lane, std::function<void()> scatter) {
  for (;;) {
    scatter();
    // Notified under the lock: a waiter that sees the count cannot destroy us before we let go.
    std::lock_guard lock(mutex_);
    ++finished_[lane];
    std::function<void()> following = std::move(next_[lane]);
    next_[lane] = nullptr;
    finished_cv_.notify_all();
    if (!following) return;
    scatter = std::move(following);
  }
}

double ScatterLanes::wait(int32_t lane) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  finished_cv_.wait(lock, [&] { return finished_[lane] == started_[lane]; });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void ScatterLanes::wait_all() {
  for (std::size_t l = 0; l < started_.size(); ++l) wait(static_cast<int32_t>(l));
}

}  // namespace hgca::cpu
