// Session 48: two arenas of one slot, a spinning task enqueued in each, do both run at once? Arg 3:
// max_allowed_parallelism; arenas (1, 0) here; (1, 1) in the variant quoted (sed the line). Built with
// g++ -O2 -std=c++20 tbb-arena-meet.cpp -ltbb; run ./a.out 0 0 N.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  int phase1 = argc > 1 ? atoi(argv[1]) : 1;
  unsigned res = argc > 2 ? atoi(argv[2]) : 0;
  if (phase1) {
    tbb::task_arena a(2, res), b(2, res);
    std::atomic<bool> ran{false};
    b.enqueue([&] { ran = true; });
    while (!ran) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, argc > 3 ? atoi(argv[3]) : 4);
  tbb::task_arena c(1, 0), d(1, 0);
  std::vector<tbb::task_arena*> ar{&c, &d};
  std::atomic<int> arrived{0}; auto mainid = std::this_thread::get_id();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<tbb::task_group> g(2);
  for (int k = 0; k < 2; ++k) ar[k]->enqueue(g[k].defer([&, k] {
    ++arrived;
    auto dl = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (arrived < 2 && std::chrono::steady_clock::now() < dl) std::this_thread::yield();
    printf("body %d main %d idx %d met %d at %.3f s\n", k, int(std::this_thread::get_id() == mainid), tbb::this_task_arena::current_thread_index(), arrived.load() == 2, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }));
  for (int k = 0; k < 2; ++k) ar[k]->execute([&, k] { g[k].wait(); });
}
