// Host functions on a CUDA stream, handed to a thread of ours instead of CUDA's callback thread.
//
// cudaLaunchHostFunc wakes CUDA's callback thread for each function; on the GPU machine that hand-off
// took 26–50 µs per function, sometimes ~0.4 ms or more, and an attention call has two in series on a
// decode step's critical path (bench/results/gpu-runtime/decode-spikes/). In kPoll mode a call is
// one batch of three stream memory operations on a slot in mapped pinned memory (write req = 1;
// wait until done == 1; write done = 0), and a thread of HostCalls, spinning while work is near,
// sees req, runs the function and sets done. Both are capturable, so a captured call runs its
// function at every launch of the graph. kCallback is cudaLaunchHostFunc itself (the fallback where
// the driver lacks stream memory operations, and the peer the benchmarks compare against).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca::gpu {

class HostCalls {
 public:
  using Fn = void (*)(void*);

  /// Slots for calls in flight and for captured calls (reused only after a single launch, for
  /// calls captured `once`): 64 KiB of cache lines.
  static constexpr uint32_t kDefaultSlots = 1024;

  /// kAuto takes kPoll where the driver has stream memory operations, kCallback otherwise; kPoll
  /// where it has not fails with kUnsupported. A call that finds none of the `slots` free goes to
  /// cudaLaunchHostFunc instead.
  static Status create(HostHandoff mode, std::unique_ptr<HostCalls>* out, uint32_t slots = kDefaultSlots);
  ~HostCalls();  // the streams must be idle: a pending call would wait for a thread that is gone
  HostCalls(const HostCalls&) = delete;
  HostCalls& operator=(const HostCalls&) = delete;

  HostHandoff mode() const { return mode_; }
  /// Slots taken: by direct calls until their stream has gone past, by captured calls for good
  /// (`once`: until their graph's launch has gone past).
  uint32_t slots_in_use();
  /// Calls that found no free slot and went to cudaLaunchHostFunc instead.
  uint64_t fallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }

  /// Enqueues fn(arg) on `stream`: the work after it waits until it has returned. `captured`: the
  /// stream is being captured, so the call runs at every launch of the graph and its slot is never
  /// reused; arg must then outlive the graph. `once` (with `captured`): the graph is launched once,
  /// and the slot is reused once that launch has gone past (a second launch would run whatever
  /// call has the slot then). Like a CUDA host function, fn must not call CUDA.
  Status launch(cudaStream_t stream, Fn fn, void* arg, bool captured, bool once = false);

 private:
  struct Slot {  // in mapped pinned memory, one per cache line (the GPU writes them)
    uint32_t req;
    uint32_t done;
    uint32_t pad[14];
  };
  struct Entry {  // set before the slot is watched, unchanged while it is
    Fn fn = nullptr;
    void* arg = nullptr;
    bool captured = false;
    bool once = false;  // captured, launched once: freed as a direct call's slot is
  };
  explicit HostCalls(HostHandoff mode) : mode_(mode) {}
  void serve();
  bool poll_once(bool* in_flight);

  const HostHandoff mode_;
  Slot* slots_ = nullptr;             // host address
  unsigned long long slots_dev_ = 0;  // the same memory's device address
  uint32_t capacity_ = 0;
  void* batch_mem_op_ = nullptr;  // cuStreamBatchMemOp (a driver entry point)

  std::mutex mutex_;  // entries_, free_, active_, version_
  std::condition_variable wake_;
  std::vector<Entry> entries_;    // per slot
  std::vector<uint32_t> free_;    // slots to hand out
  std::vector<uint32_t> active_;  // slots the thread watches
  std::atomic<uint64_t> version_{0};  // changes whenever active_ does
  // The thread's own: its copy of the watched entries (of version seen_), and per slot whether a
  // direct call's function has returned (its slot frees once the stream has reset done).
  std::vector<std::pair<uint32_t, Entry>> watched_;
  uint64_t seen_ = ~uint64_t{0};
  std::vector<bool> served_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> fallbacks_{0};
  std::thread thread_;
};

}  // namespace hgca::gpu
