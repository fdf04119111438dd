// FlashD2H's scatter lanes (see flash_d2h.hpp).
#include "cpu/flash_d2h.hpp"

#include <chrono>

namespace hgca::cpu {

ScatterLanes::ScatterLanes(int32_t lanes, tbb::task_arena& arena) : arena_(arena) {
  for (int32_t l = 0; l < lanes; ++l) lanes_.push_back(std::make_unique<tbb::task_group>());
}

ScatterLanes::~ScatterLanes() { wait_all(); }

void ScatterLanes::start(int32_t lane, std::function<void()> scatter) {
  wait(lane);
  // Enqueued, not run: the caller (a CUDA host function) returns at once.
  arena_.enqueue(lanes_[lane]->defer(std::move(scatter)));
}

double ScatterLanes::wait(int32_t lane) {
  const auto t0 = std::chrono::steady_clock::now();
  arena_.execute([&] { lanes_[lane]->wait(); });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void ScatterLanes::wait_all() {
  for (std::size_t l = 0; l < lanes_.size(); ++l) wait(static_cast<int32_t>(l));
}

}  // namespace hgca::cpu
