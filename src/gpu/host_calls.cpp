// Host functions on a stream through stream memory operations and a thread of ours (host_calls.hpp).
#include "gpu/host_calls.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>

#include "status_error.hpp"

namespace hgca::gpu {
namespace {

// The thread spins this long after its last call before it sleeps: a decode step's next call comes
// within it. Asleep, it still looks at captured slots (their graph may be launched any time) this
// often, and wakes at once for a direct call.
constexpr auto kSpin = std::chrono::milliseconds(2);
constexpr auto kNap = std::chrono::microseconds(100);

uint32_t load(const uint32_t& word) { return std::atomic_ref<const uint32_t>(word).load(std::memory_order_acquire); }
void store(uint32_t& word, uint32_t v) { std::atomic_ref<uint32_t>(word).store(v, std::memory_order_release); }

}  // namespace

Status HostCalls::create(HostHandoff mode, std::unique_ptr<HostCalls>* out, uint32_t slots) {
  if (mode == HostHandoff::kCallback) {
    out->reset(new HostCalls(HostHandoff::kCallback));
    return Status::ok();
  }
  void* batch_mem_op = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const bool have = cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &batch_mem_op, 12000, cudaEnableDefault,
                                                     &found) == cudaSuccess && found == cudaDriverEntryPointSuccess;
  cudaGetLastError();
  if (!have) {
    if (mode == HostHandoff::kPoll) {
      return Status(StatusCode::kUnsupported,
                    "create: handoff = poll needs the driver's stream memory operations (cuStreamBatchMemOp), "
                    "which it does not offer; use auto or callback");
    }
    out->reset(new HostCalls(HostHandoff::kCallback));
    return Status::ok();
  }
  std::unique_ptr<HostCalls> hc(new HostCalls(HostHandoff::kPoll));
  hc->batch_mem_op_ = batch_mem_op;
  void* host = nullptr;
  if (cudaHostAlloc(&host, slots * sizeof(Slot), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return Status(StatusCode::kOutOfMemory, "create: no pinned host memory for the host-call slots");
  }
  hc->slots_ = static_cast<Slot*>(host);
  void* dev = nullptr;
  if (cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
    cudaGetLastError();
    return Status(StatusCode::kInternal, "create: the host-call slots have no device address");
  }
  hc->slots_dev_ = reinterpret_cast<unsigned long long>(dev);
  hc->capacity_ = slots;
  hc->entries_.resize(slots);
  hc->served_.assign(slots, false);
  // Room for every slot in each list: launch and the thread then never allocate. Memory running
  // out there would leave a stream waiting on a slot no one watches, or end the thread.
  hc->free_.reserve(slots);
  hc->active_.reserve(slots);
  hc->watched_.reserve(slots);
  for (uint32_t i = slots; i-- > 0;) {
    hc->slots_[i] = {};
    hc->free_.push_back(i);
  }
  hc->thread_ = std::thread([p = hc.get()] { p->serve(); });
  *out = std::move(hc);
  return Status::ok();
}

HostCalls::~HostCalls() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);  // so that a thread about to sleep sees it
      stop_.store(true);
    }
    wake_.notify_one();
    thread_.join();
  }
  if (slots_) cudaFreeHost(slots_);
}

Status HostCalls::launch(cudaStream_t stream, Fn fn, void* arg, bool captured, bool once) {
  uint32_t slot = capacity_;
  if (mode_ == HostHandoff::kPoll) {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    }
  }
  if (slot == capacity_) {
    if (mode_ == HostHandoff::kPoll) fallbacks_.fetch_add(1, std::memory_order_relaxed);
    if (cudaError_t e = cudaLaunchHostFunc(stream, fn, arg); e != cudaSuccess) {
      cudaGetLastError();  // not left for the next call's check to report as its own
      return Status(StatusCode::kInternal, std::string("cudaLaunchHostFunc failed: ") + cudaGetErrorString(e) + " (" +
                                               cudaGetErrorName(e) + ")");
    }
    return Status::ok();
  }
  Slot& s = slots_[slot];
  store(s.req, 0);
  store(s.done, 0);
  const CUdeviceptr req = slots_dev_ + slot * sizeof(Slot) + offsetof(Slot, req);
  const CUdeviceptr done = slots_dev_ + slot * sizeof(Slot) + offsetof(Slot, done);
  // One driver call for the three operations (they run in this order): each API call costs a few
  // µs of the enqueue, which bounds a small decode step. The write of req follows the stream's
  // earlier work (a fence precedes it by default).
  CUstreamBatchMemOpParams ops[3] = {};
  ops[0].writeValue = {CU_STREAM_MEM_OP_WRITE_VALUE_32, req, {1}, CU_STREAM_WRITE_VALUE_DEFAULT, 0};
  ops[1].waitValue = {CU_STREAM_MEM_OP_WAIT_VALUE_32, done, {1}, CU_STREAM_WAIT_VALUE_EQ, 0};
  ops[2].writeValue = {CU_STREAM_MEM_OP_WRITE_VALUE_32, done, {0}, CU_STREAM_WRITE_VALUE_DEFAULT, 0};
  const CUresult r =
      reinterpret_cast<PFN_cuStreamBatchMemOp_v11070>(batch_mem_op_)(reinterpret_cast<CUstream>(stream), 3, ops, 0);
  if (r != CUDA_SUCCESS) {
    // The slot is not watched, and not reused either: the write of req may still be on the stream.
    return Status(StatusCode::kInternal, "a stream memory operation failed (CUresult " + std::to_string(r) + ")");
  }
  {
    std::lock_guard lock(mutex_);
    entries_[slot] = {fn, arg, captured, captured && once};
    active_.push_back(slot);
    version_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_one();
  return Status::ok();
}

uint32_t HostCalls::slots_in_use() {
  std::lock_guard lock(mutex_);
  return capacity_ - static_cast<uint32_t>(free_.size());
}

/// One pass over the watched slots: runs the calls whose stream has arrived, frees the slots of
/// direct calls (and of calls captured once) once their stream has gone past. Returns whether it ran
/// one; *in_flight: whether a direct call's stream has yet to arrive or to go past (or a launched
/// once-captured call's).
bool HostCalls::poll_once(bool* in_flight) {
  if (const uint64_t v = version_.load(std::memory_order_acquire); v != seen_) {
    std::lock_guard lock(mutex_);
    watched_.clear();
    for (const uint32_t i : active_) watched_.emplace_back(i, entries_[i]);
    seen_ = version_.load(std::memory_order_relaxed);
  }
  bool ran = false;
  *in_flight = false;
  for (const auto& [i, e] : watched_) {
    Slot& s = slots_[i];
    if (load(s.req) == 1) {
      store(s.req, 0);
      e.fn(e.arg);
      store(s.done, 1);
      served_[i] = !e.captured || e.once;
      ran = true;
    } else if (!e.captured || e.once) {
      if (served_[i] && load(s.done) == 0) {  // the stream has reset it and will not look at it again
        served_[i] = false;
        std::lock_guard lock(mutex_);
        free_.push_back(i);
        std::erase(active_, i);
        version_.fetch_add(1, std::memory_order_release);
      } else if (!e.captured || served_[i]) {  // a graph not launched yet may never be
        *in_flight = true;
      }
    }
  }
  return ran;
}

void HostCalls::serve() {
  auto last = std::chrono::steady_clock::now();
  int idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    bool in_flight = false;
    if (poll_once(&in_flight)) {
      last = std::chrono::steady_clock::now();
      idle = 0;
      continue;
    }
    if (++idle < 64) {
      _mm_pause();
      continue;
    }
    idle = 0;
    const auto now = std::chrono::steady_clock::now();
    if (in_flight) last = now;
    if (now - last < kSpin) {
      std::this_thread::yield();  // others (the pool's workers) may need this core
      continue;
    }
    std::unique_lock lock(mutex_);
    const bool captured = std::any_of(active_.begin(), active_.end(), [&](uint32_t i) { return entries_[i].captured; });
    // Woken by a call added since the last pass (also one added before the lock: no notify lost),
    // it spins again; a nap that ends with nothing new polls a few times, then naps again (a graph
    // captured and never launched kept a core busy: 2 ms of spinning after each nap).
    const auto added = [&] { return stop_.load() || version_.load(std::memory_order_relaxed) != seen_; };
    const bool woken = captured ? wake_.wait_for(lock, kNap, added)
                                : (wake_.wait(lock, [&] { return stop_.load() || !active_.empty(); }), true);
    if (woken) last = std::chrono::steady_clock::now();
  }
}

}  // namespace hgca::gpu
