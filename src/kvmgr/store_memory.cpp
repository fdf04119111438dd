// The store memory allocator (see store_memory.hpp): chunks per node, slabs of one slot size per
// chunk, and the background thread that grows, registers and releases chunks.
#include "kvmgr/store_memory.hpp"

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cpu/pool.hpp"

namespace hgca::kvmgr {

/// The chunks of one slot size that have a free slot: an intrusive list, so that freeing a slot
/// never allocates.
struct SlotClass {
  StoreChunk* partial = nullptr;
};

/// One chunk of a node's store memory and, while it serves a slot size, its slab state (guarded by
/// the allocator's mutex, but for `registered`, which spans read without it).
struct StoreChunk {
  std::byte* base = nullptr;
  std::size_t bytes = 0;
  int node = 0;
  bool bound = false;
  bool large = false;                // holds one span of more than half a chunk
  bool awaits_registration = false;  // grown synchronously: the background thread registers it
  std::atomic<bool> registered{false};

  std::size_t slot_bytes = 0;  // 0: spare
  uint32_t slots = 0, used = 0;
  uint32_t carved = 0;               // slots [0, carved) were handed out at least once
  std::vector<uint32_t> free_slots;  // capacity for every slot: freeing never allocates
  SlotClass* cls = nullptr;
  StoreChunk *prev = nullptr, *next = nullptr;  // in cls's partial list
  bool listed = false;
};

struct StoreMemory::Node {
  std::atomic<std::size_t> unpopulated_bytes{0};  // of chunks checked against the node's memory, pages not yet in
  int index = 0;
  std::vector<std::unique_ptr<StoreChunk>> chunks;
  std::vector<StoreChunk*> spare;  // capacity ≥ chunks.size(): freeing never allocates
  std::unordered_map<std::size_t, SlotClass> classes;  // by slot size; references stay valid
  bool growing = false;      // the background thread is growing it
  bool want_growth = false;  // asked of the background thread
  bool freed_large = false;  // a large chunk is free, to be released
  int awaiting_registration = 0;
  std::string registration_error;  // the device refused a chunk: no more growth
  StoreMemoryStats stats;
};

namespace {

constexpr std::size_t kPage = 4096;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

void link(SlotClass& cls, StoreChunk* c) {
  c->prev = nullptr;
  c->next = cls.partial;
  if (cls.partial) cls.partial->prev = c;
  cls.partial = c;
  c->listed = true;
}

void unlink(StoreChunk* c) {
  if (c->prev) c->prev->next = c->next;
  else c->cls->partial = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = nullptr;
  c->listed = false;
}

}  // namespace

Status check_chunk_bytes(int64_t bytes) {
  if (bytes < static_cast<int64_t>(16 * kPage) || bytes % static_cast<int64_t>(kPage) != 0) {
    return {StatusCode::kInvalidArgument,
            fmt::format("store_chunk_bytes = {}, expected a multiple of 4096 that is at least 65536", bytes)};
  }
  return Status::ok();
}

// ---- StoreSpan ----

StoreSpan& StoreSpan::operator=(StoreSpan&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    chunk_ = std::exchange(other.chunk_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    slot_ = std::exchange(other.slot_, 0);
  }
  return *this;
}

bool StoreSpan::device_readable() const {
  return chunk_ && chunk_->registered.load(std::memory_order_acquire);
}

void StoreSpan::reset() noexcept {
  if (!owner_) return;
  owner_->release(chunk_, slot_);
  chunk_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
  owner_.reset();  // may destroy the allocator: last
}

// ---- StoreMemory ----

bool StoreMemory::node_figures_hold(std::size_t nodes_total_bytes, std::size_t machine_bytes) {
  return machine_bytes > 0 && static_cast<double>(nodes_total_bytes) >= 0.9 * static_cast<double>(machine_bytes);
}

StoreMemory::StoreMemory(std::shared_ptr<const cpu::Topology> topology, StoreMemoryOptions options)
    : topology_(std::move(topology)), opt_(std::move(options)) {
  usable_bytes_ = machine_memory_.usable_bytes();
  keep_free_bytes_ = opt_.keep_free_bytes > 0 ? opt_.keep_free_bytes
                                               : std::min<std::size_t>(std::size_t{1} << 30, usable_bytes_ / 32);
  check_nodes_ = topology_->node_count() > 1 &&
                 (opt_.node_available_memory || (topology_->is_this_system() && topology_->memory_binding_supported() &&
                                                 node_figures_hold(machine_memory_.nodes_total_bytes(),
                                                                   kvmgr::MachineMemory::physical_bytes())));
  const uint64_t llc = topology_->last_level_cache_bytes();
  stream_above_ = static_cast<int64_t>(opt_.stream_above_bytes > 0 ? opt_.stream_above_bytes
                                       : llc > 0                    ? llc
                                                                    : kDefaultCacheBytes);
  for (int i = 0; i < topology_->node_count(); ++i) {
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->index = i;
    nodes_.back()->stats.node = i;
  }
}

Status StoreMemory::create(std::shared_ptr<const cpu::Topology> topology, StoreMemoryOptions options,
                           std::shared_ptr<StoreMemory>* out) {
  if (!out) return {StatusCode::kInvalidArgument, "StoreMemory::create: out is null"};
  if (!topology) return {StatusCode::kInvalidArgument, "StoreMemory::create: topology is null"};
  if (Status s = check_chunk_bytes(static_cast<int64_t>(options.chunk_bytes)); !s) return s;
  if (options.low_water_chunks < 0 || options.high_water_chunks <= options.low_water_chunks) {
    return {StatusCode::kInvalidArgument,
            fmt::format("store memory low_water_chunks = {}, high_water_chunks = {}: expected 0 ≤ low < high",
                        options.low_water_chunks, options.high_water_chunks)};
  }
  std::shared_ptr<StoreMemory> memory(new StoreMemory(std::move(topology), std::move(options)));
  try {
    memory->background_ = std::thread([m = memory.get()] { m->run_background(); });
  } catch (const std::system_error& e) {
    return {StatusCode::kInternal, fmt::format("store memory: cannot start its background thread ({})", e.what())};
  }
  *out = std::move(memory);
  return Status::ok();
}

StoreMemory::~StoreMemory() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (background_.joinable()) background_.join();
  // No span is left (each holds a reference), and enqueued device work that read store memory has
  // finished before the runtime let go of it.
  for (auto& n : nodes_) {
    for (auto& c : n->chunks) free_chunk_memory(*c);
  }
}

StoreMemory::Node& StoreMemory::node(int index) const {
  if (index < 0 || index >= node_count()) {
    throw std::out_of_range(fmt::format("store memory: node = {}, expected in [0, {}) (the topology's NUMA nodes)",
                                        index, node_count()));
  }
  return *nodes_[static_cast<std::size_t>(index)];
}

StoreSpan StoreMemory::allocate(int node_index, std::size_t bytes) {
  StoreSpan span;
  allocate(node_index, bytes, {&span, 1});
  return span;
}

void StoreMemory::check_request(int node_index, std::size_t bytes, std::size_t count, std::size_t bookkeeping) const {
  const std::size_t size = round_up(std::max<std::size_t>(bytes, 1), kAlignment);
  // More than the store may ever hold (its limit, or the memory this process may use) fails before
  // any chunk is taken: growing towards it would only bring the OOM killer.
  const double wanted = static_cast<double>(size) * static_cast<double>(count);
  if (opt_.limit_bytes > 0 && wanted > static_cast<double>(opt_.limit_bytes)) {
    throw StoreMemoryExhausted(fmt::format("store memory: store_limit_bytes = {} is less than the {:.0f} bytes wanted "
                                           "at once on NUMA node {}; raise the limit", opt_.limit_bytes, wanted, node_index));
  }
  const double with_bookkeeping = static_cast<double>(size + bookkeeping) * static_cast<double>(count);
  if (usable_bytes_ > 0 && with_bookkeeping > static_cast<double>(usable_bytes_)) {
    throw StoreMemoryExhausted(fmt::format("store memory: {:.0f} bytes wanted at once on NUMA node {}, more than the {} "
                                           "bytes of memory this process may use (the machine's, or its cgroup's limit)",
                                           with_bookkeeping, node_index, usable_bytes_));
  }
}

void StoreMemory::allocate(int node_index, std::size_t bytes, std::span<StoreSpan> out) {
  Node& n = node(node_index);
  const std::size_t size = round_up(std::max<std::size_t>(bytes, 1), kAlignment);
  check_request(node_index, bytes, out.size());
  std::size_t taken = 0;
  try {
    if (size > opt_.chunk_bytes / 2) {
      for (; taken < out.size(); ++taken) out[taken] = allocate_large(node_index, size);
      return;
    }
    std::unique_lock lock(mutex_);
    SlotClass& cls = n.classes[size];
    for (; taken < out.size(); ++taken) {
      assert(!out[taken]);  // replacing a span would release it under the lock
      while (!cls.partial) {
        if (!n.spare.empty()) {
          StoreChunk* c = n.spare.back();
          const auto slots = static_cast<uint32_t>(c->bytes / size);
          c->free_slots.clear();
          c->free_slots.reserve(slots);  // may throw; nothing changed yet
          n.spare.pop_back();
          c->slot_bytes = size;
          c->slots = slots;
          c->used = 0;
          c->carved = 0;
          c->cls = &cls;
          link(cls, c);
          request_growth(n);
          break;
        }
        // No spare chunk: grow now, without holding the lock (other threads may pop meanwhile).
        lock.unlock();
        std::unique_ptr<StoreChunk> grown = new_chunk(node_index, opt_.chunk_bytes, false);
        lock.lock();
        adopt_or_free(n, grown, true, lock);
        note_sync_growth(n);
      }
      StoreChunk* c = cls.partial;
      uint32_t slot;
      if (c->free_slots.empty()) {
        slot = c->carved++;
      } else {
        slot = c->free_slots.back();
        c->free_slots.pop_back();
      }
      if (++c->used == c->slots) unlink(c);
      n.stats.used_bytes += static_cast<int64_t>(size);
      used_total_.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);

      StoreSpan& span = out[taken];
      span.owner_ = shared_from_this();
      span.chunk_ = c;
      span.data_ = c->base + static_cast<std::size_t>(slot) * size;
      span.bytes_ = size;
      span.slot_ = slot;
    }
  } catch (...) {
    // The lock is gone with its scope: the spans taken so far go back.
    for (std::size_t i = 0; i < taken; ++i) out[i].reset();
    throw;
  }
}

StoreSpan StoreMemory::allocate_large(int node_index, std::size_t bytes) {
  Node& n = node(node_index);
  const std::size_t want = round_up(bytes, kPage);
  auto take = [&](StoreChunk* c) {
    c->large = true;
    c->slot_bytes = c->bytes;
    c->slots = c->used = c->carved = 1;
    n.stats.used_bytes += static_cast<int64_t>(c->bytes);
    used_total_.fetch_add(static_cast<int64_t>(c->bytes), std::memory_order_relaxed);
  };
  std::unique_lock lock(mutex_);
  // Memory the node holds and nothing uses serves first, before the background thread would give
  // it back: it counts against the limit meanwhile. A freed large chunk of this size (up to twice
  // it: context caches' segments double), else a spare chunk where the span fits one.
  StoreChunk* c = nullptr;
  for (const auto& held : n.chunks) {
    if (held->large && held->used == 0 && held->bytes >= want && held->bytes / 2 < want) {
      c = held.get();
      break;
    }
  }
  if (!c && want <= opt_.chunk_bytes && !n.spare.empty()) {
    c = n.spare.back();
    n.spare.pop_back();
    c->cls = nullptr;
    request_growth(n);
  }
  if (c) {
    take(c);
  } else {
    lock.unlock();
    std::unique_ptr<StoreChunk> chunk = new_chunk(node_index, want, false);
    c = chunk.get();
    lock.lock();
    adopt_or_free(n, chunk, false, lock);
    take(c);
    note_sync_growth(n);
  }

  StoreSpan span;
  span.owner_ = shared_from_this();
  span.chunk_ = c;
  span.data_ = c->base;
  span.bytes_ = c->bytes;
  return span;
}

std::unique_ptr<StoreChunk> StoreMemory::new_chunk(int node_index, std::size_t bytes, bool background) {
  Node& n = node(node_index);
  // Past what the machine (or the cgroup) has available the kernel's OOM killer, not an error, would
  // end the process. Chunks come with their pages (below), so the store's own count as used; those
  // other threads are taking meanwhile count until their pages are in.
  struct Unpopulated {
    std::atomic<std::size_t>&total, &on_node;
    std::size_t bytes;
    ~Unpopulated() {
      total.fetch_sub(bytes);
      on_node.fetch_sub(bytes);
    }
  } unpopulated{unpopulated_bytes_, n.unpopulated_bytes, bytes};
  const std::size_t pending = unpopulated_bytes_.fetch_add(bytes) + bytes;
  const std::size_t node_pending = n.unpopulated_bytes.fetch_add(bytes) + bytes;
  const std::size_t available = opt_.available_memory ? opt_.available_memory() : machine_memory_.available_bytes();
  if (available < pending + keep_free_bytes_) {
    throw StoreMemoryExhausted(fmt::format(
        "store memory: a chunk of {} bytes on NUMA node {} (with {} more being taken) would leave less than {} of "
        "the {} bytes this process can still take (MemAvailable, or its cgroup's limit less its usage); release "
        "sequences", bytes, node_index, pending - bytes, keep_free_bytes_, available));
  }
  // A chunk bound to one of several nodes comes from that node alone, which can run out first.
  if (check_nodes_) {
    const std::size_t node_keep = keep_free_bytes_ / static_cast<std::size_t>(node_count());
    const std::size_t node_available =
        opt_.node_available_memory ? opt_.node_available_memory(node_index)
                                   : machine_memory_.node_available_bytes(topology_->nodes()[node_index].os_index);
    if (node_available < node_pending + node_keep) {
      throw StoreMemoryExhausted(fmt::format(
          "store memory: a chunk of {} bytes bound to NUMA node {} (with {} more being taken there) would leave less "
          "than {} of the {} bytes that node has free (free memory and inactive page cache); release sequences "
          "placed on it", bytes, node_index, node_pending - bytes, node_keep, node_available));
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (!n.registration_error.empty()) {
      throw StoreMemoryExhausted(fmt::format(
          "store memory on NUMA node {}: no more chunks since the GPU refused to register one ({})",
          node_index, n.registration_error));
    }
    if (opt_.limit_bytes > 0 && reserved_total_ + bytes > opt_.limit_bytes) {
      throw StoreMemoryExhausted(fmt::format(
          "store memory: store_limit_bytes = {} reached ({} bytes held in chunks, {} more wanted on NUMA node "
          "{}); raise the limit or release sequences",
          opt_.limit_bytes, reserved_total_, bytes, node_index));
    }
    reserved_total_ += bytes;
  }
  auto unreserve = [&] {
    std::lock_guard lock(mutex_);
    reserved_total_ -= bytes;
  };
  bool bound = false;
  void* p = cpu::node_alloc(*topology_, node_index, bytes, &bound);
  if (!p) {
    unreserve();
    throw StoreMemoryExhausted(
        fmt::format("store memory: the OS refused a chunk of {} bytes on NUMA node {}", bytes, node_index));
  }
  std::unique_ptr<StoreChunk> chunk;
  try {
    chunk = std::make_unique<StoreChunk>();
  } catch (...) {
    cpu::node_free(p, bytes);
    unreserve();
    throw;
  }
  chunk->base = static_cast<std::byte*>(p);
  chunk->bytes = bytes;
  chunk->node = node_index;
  chunk->bound = bound;
#ifdef MADV_POPULATE_WRITE
  // Every chunk comes with its pages: the step that fills one then pays no page faults, and the
  // check above sees the store's memory as used (Linux ≥ 5.14; elsewhere the pages fault in on
  // first touch and the check counts only those touched).
  if (madvise(p, bytes, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    const int error = errno;
    cpu::node_free(p, bytes);
    unreserve();
    throw StoreMemoryExhausted(fmt::format("store memory: the OS could not give the pages of a chunk of {} bytes on "
                                           "NUMA node {} ({})", bytes, node_index, std::strerror(error)));
  }
#endif
  if (opt_.registration.register_chunk) {
    if (!background) {
      chunk->awaits_registration = true;
      return chunk;
    }
    const Status s = opt_.registration.register_chunk(p, bytes);
    if (!s) {
      {
        std::lock_guard lock(mutex_);
        ++n.stats.registration_failures;
        n.registration_error = s.message();
      }
      free_chunk_memory(*chunk);
      throw StoreMemoryExhausted(fmt::format("store memory on NUMA node {}: registering a chunk of {} bytes failed: {}",
                                             node_index, bytes, s.message()));
    }
    chunk->registered.store(true, std::memory_order_release);
  }
  return chunk;
}

void StoreMemory::adopt(Node& n, std::unique_ptr<StoreChunk>& chunk, bool spare) {
  n.chunks.reserve(n.chunks.size() + 1);
  n.spare.reserve(n.chunks.size() + 1);
  StoreChunk& c = *chunk;
  n.chunks.push_back(std::move(chunk));  // cannot throw now
  if (spare) n.spare.push_back(&c);
  ++n.stats.chunks;
  n.stats.reserved_bytes += static_cast<int64_t>(c.bytes);
  n.stats.bound_chunks += c.bound ? 1 : 0;
  n.stats.registered_chunks += c.registered.load(std::memory_order_relaxed) ? 1 : 0;
  n.awaiting_registration += c.awaits_registration ? 1 : 0;
}

void StoreMemory::adopt_or_free(Node& n, std::unique_ptr<StoreChunk>& chunk, bool spare,
                                std::unique_lock<std::mutex>& lock) {
  try {
    adopt(n, chunk, spare);
  } catch (...) {
    lock.unlock();  // free_chunk_memory takes the lock
    free_chunk_memory(*chunk);
    lock.lock();
    throw;
  }
}

void StoreMemory::note_sync_growth(Node& n) {
  ++n.stats.sync_growths;
  if (n.awaiting_registration > 0) work_cv_.notify_one();  // the background thread registers it
}

void StoreMemory::free_chunk_memory(StoreChunk& chunk) noexcept {
  if (chunk.registered.load(std::memory_order_acquire) && opt_.registration.unregister_chunk) {
    opt_.registration.unregister_chunk(chunk.base, chunk.bytes);
  }
  cpu::node_free(chunk.base, chunk.bytes);
  std::lock_guard lock(mutex_);
  reserved_total_ -= chunk.bytes;
}

void StoreMemory::release(StoreChunk* c, uint32_t slot) noexcept {
  std::lock_guard lock(mutex_);
  Node& n = *nodes_[static_cast<std::size_t>(c->node)];
  n.stats.used_bytes -= static_cast<int64_t>(c->slot_bytes);
  used_total_.fetch_sub(static_cast<int64_t>(c->slot_bytes), std::memory_order_relaxed);
  if (c->large) {
    c->used = 0;
    n.freed_large = true;
    work_cv_.notify_one();
    return;
  }
  c->free_slots.push_back(slot);
  if (c->used-- == c->slots) link(*c->cls, c);  // it was full
  if (c->used == 0) {
    unlink(c);
    c->slot_bytes = 0;
    c->cls = nullptr;
    n.spare.push_back(c);
    if (n.spare.size() > static_cast<std::size_t>(opt_.high_water_chunks)) work_cv_.notify_one();
  }
}

void StoreMemory::request_growth(Node& n) {
  if (opt_.low_water_chunks == 0 || n.growing || n.want_growth || !n.registration_error.empty()) return;
  if (n.spare.size() >= static_cast<std::size_t>(opt_.low_water_chunks)) return;
  if (opt_.limit_bytes > 0 && reserved_total_ + opt_.chunk_bytes > opt_.limit_bytes) return;
  n.want_growth = true;
  work_cv_.notify_one();
}

void StoreMemory::prepare(int node_index) {
  Node& n = node(node_index);
  std::lock_guard lock(mutex_);
  request_growth(n);
}

bool StoreMemory::has_work() const {
  for (const auto& n : nodes_) {
    if (n->want_growth || n->freed_large || n->awaiting_registration > 0 ||
        n->spare.size() > static_cast<std::size_t>(opt_.high_water_chunks)) {
      return true;
    }
  }
  return false;
}

void StoreMemory::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return !busy_ && !has_work(); });
}

void StoreMemory::run_background() {
  std::unique_lock lock(mutex_);
  // Takes `c` out of the node's bookkeeping for release (lock held).
  auto detach = [&](Node& n, StoreChunk* c) {
    auto it = std::find_if(n.chunks.begin(), n.chunks.end(), [&](const auto& p) { return p.get() == c; });
    std::unique_ptr<StoreChunk> owned = std::move(*it);
    n.chunks.erase(it);
    --n.stats.chunks;
    n.stats.reserved_bytes -= static_cast<int64_t>(c->bytes);
    n.stats.bound_chunks -= c->bound ? 1 : 0;
    n.stats.registered_chunks -= c->registered.load(std::memory_order_relaxed) ? 1 : 0;
    ++n.stats.released_chunks;
    return owned;
  };
  for (;;) {
    busy_ = false;
    idle_cv_.notify_all();
    work_cv_.wait(lock, [&] { return stop_ || has_work(); });
    if (stop_) return;
    busy_ = true;
    for (auto& np : nodes_) {
      Node& n = *np;
      // Chunks grown synchronously: registered here, since their allocator may have been a CUDA
      // host function, which must not call CUDA.
      while (n.awaiting_registration > 0) {
        auto it = std::find_if(n.chunks.begin(), n.chunks.end(), [](const auto& c) { return c->awaits_registration; });
        StoreChunk* c = it->get();
        c->awaits_registration = false;
        --n.awaiting_registration;
        lock.unlock();
        const Status s = opt_.registration.register_chunk(c->base, c->bytes);
        lock.lock();
        if (s) {
          c->registered.store(true, std::memory_order_release);
          ++n.stats.registered_chunks;
        } else {
          // The chunk is in use: it stays host memory, and the node grows no more.
          ++n.stats.registration_failures;
          n.registration_error = s.message();
        }
      }
      std::vector<std::unique_ptr<StoreChunk>> released;
      try {
        released.reserve(n.chunks.size());  // so that detaching never meets a failing push_back
        if (n.freed_large) {
          n.freed_large = false;
          for (std::size_t i = 0; i < n.chunks.size();) {
            StoreChunk* c = n.chunks[i].get();
            if (c->large && c->used == 0) released.push_back(detach(n, c));
            else ++i;
          }
        }
        while (n.spare.size() > static_cast<std::size_t>(opt_.high_water_chunks)) {
          StoreChunk* c = n.spare.back();
          released.push_back(detach(n, c));
          n.spare.pop_back();
        }
      } catch (const std::bad_alloc&) {
        // No room for the list: releasing waits for the next round.
      }
      if (!released.empty()) {
        lock.unlock();
        for (auto& c : released) free_chunk_memory(*c);
        released.clear();
        lock.lock();
      }
      while (n.want_growth && !stop_) {
        n.want_growth = false;
        if (n.spare.size() >= static_cast<std::size_t>(opt_.low_water_chunks)) break;
        n.growing = true;
        lock.unlock();
        std::unique_ptr<StoreChunk> grown;
        try {
          grown = new_chunk(n.index, opt_.chunk_bytes, true);
        } catch (const std::bad_alloc&) {
          // Exhausted (limit, OS or device): an allocation that needs the chunk will say so.
        }
        lock.lock();
        n.growing = false;
        if (!grown) break;
        try {
          adopt_or_free(n, grown, true, lock);
        } catch (const std::bad_alloc&) {
          break;
        }
        ++n.stats.background_growths;
        request_growth(n);  // still below the mark: another
      }
    }
  }
}

StoreMemoryStats StoreMemory::stats(int node_index) const {
  const Node& n = node(node_index);
  std::lock_guard lock(mutex_);
  return n.stats;
}

std::vector<StoreMemory::ChunkInfo> StoreMemory::chunks() const {
  std::lock_guard lock(mutex_);
  std::vector<ChunkInfo> out;
  for (const auto& n : nodes_) {
    for (const auto& c : n->chunks) {
      out.push_back({c->base, c->bytes, c->node, c->bound, c->registered.load(std::memory_order_relaxed),
                     c->slot_bytes});
    }
  }
  return out;
}

}  // namespace hgca::kvmgr
