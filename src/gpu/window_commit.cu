// Evicted-MAW and insert kernels of the window ring (see window_commit.hpp). Rows are moved in
// 16-byte units: a head row is head_dim × elem bytes, a multiple of 16 for every supported dtype.
#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/window_commit.hpp"

namespace hgca::gpu {
namespace {

struct LaunchSeqs {
  CommitSeq seq[kMaxLaunchBatch];
};

struct Geometry {
  int32_t hkv, capacity;
  int64_t units;  // 16-byte units per head row
};

__device__ inline int64_t ring_row(const Geometry& g, const CommitSeq& s, int32_t h, int64_t slot) {
  return (static_cast<int64_t>(s.ring) * g.hkv + h) * g.capacity + slot;
}

__global__ void evicted_maw_kernel(WindowCommitParams p, Geometry g, LaunchSeqs seqs) {
  const CommitSeq s = seqs.seq[blockIdx.y];
  const int64_t work = static_cast<int64_t>(s.evict) * g.hkv;
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < work;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const auto h = static_cast<int32_t>(x / s.evict);
    const int64_t i = x % s.evict;  // entry, oldest first: in its ring slot, or a new token
    p.staging_maw[s.staging_row * g.hkv + x] =
        i < s.w ? p.ring_maw[ring_row(g, s, h, (s.tail + i) % g.capacity)]
                : p.obs_new[s.obs_offset + static_cast<int64_t>(h) * s.n_new + (i - s.w)];
  }
}

__global__ void window_insert_kernel(WindowCommitParams p, Geometry g, LaunchSeqs seqs) {
  const CommitSeq s = seqs.seq[blockIdx.y];
  const int32_t keep_from = max(0, s.evict - s.w);  // first new token that stays
  // The window's old entries, evicted or not, sit in slots tail..tail+w-1; the survivors of the
  // new tokens follow them (evicted window slots are reused once the ring wraps).
  const int64_t first_slot = static_cast<int64_t>(s.tail) + s.w;
  const int64_t work = static_cast<int64_t>(s.n_new - keep_from) * g.hkv * g.units;
  const auto* new_k = static_cast<const uint4*>(p.k_new);
  const auto* new_v = static_cast<const uint4*>(p.v_new);
  auto* ring_k = static_cast<uint4*>(p.ring_k);
  auto* ring_v = static_cast<uint4*>(p.ring_v);
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < work;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t u = x % g.units;
    const auto h = static_cast<int32_t>((x / g.units) % g.hkv);
    const int64_t r = keep_from + x / (g.units * g.hkv);
    const int64_t row = ring_row(g, s, h, (first_slot + r - keep_from) % g.capacity);
    const int64_t src = ((s.q_row + r) * g.hkv + h) * g.units + u;
    ring_k[row * g.units + u] = new_k[src];
    ring_v[row * g.units + u] = new_v[src];
    if (u == 0) p.ring_maw[row] = p.obs_new[s.obs_offset + static_cast<int64_t>(h) * s.n_new + r];
  }
}

/// One launch per kMaxLaunchBatch sequences, a thread per (entry, KV head) or, with `whole_rows`,
/// per 16-byte unit of its row.
template <typename Kernel>
int launch_batched(Kernel kernel, const WindowCommitParams& p, void* stream, int64_t (*rows_of)(const CommitSeq&),
                   bool whole_rows) {
  const Geometry g{p.n_kv_heads, p.capacity,
                   static_cast<int64_t>(p.head_dim) * static_cast<int64_t>(dtype_size(p.dtype)) / 16};
  for (int32_t first = 0; first < p.batch; first += kMaxLaunchBatch) {
    const int32_t count = std::min(kMaxLaunchBatch, p.batch - first);
    LaunchSeqs seqs{};
    int64_t most = 0;
    for (int32_t i = 0; i < count; ++i) {
      seqs.seq[i] = p.seqs[first + i];
      most = std::max(most, rows_of(seqs.seq[i]));
    }
    if (most == 0) continue;
    constexpr int kThreads = 256;
    const int64_t units_per_row = whole_rows ? g.units : 1;
    const int64_t work = most * g.hkv * units_per_row;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((work + kThreads - 1) / kThreads, 1024));
    kernel<<<dim3(blocks, static_cast<unsigned>(count)), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p, g, seqs);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace

int launch_evicted_maw(const WindowCommitParams& p, void* stream) {
  return launch_batched(evicted_maw_kernel, p, stream, [](const CommitSeq& s) -> int64_t { return s.evict; }, false);
}

int launch_window_insert(const WindowCommitParams& p, void* stream) {
  return launch_batched(window_insert_kernel, p, stream,
                        [](const CommitSeq& s) -> int64_t { return s.n_new - std::max(0, s.evict - s.w); }, true);
}

int load_window_commit_kernels() {
  cudaFuncAttributes attr{};
  if (cudaError_t e = cudaFuncGetAttributes(&attr, evicted_maw_kernel); e != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, window_insert_kernel);
}

}  // namespace hgca::gpu
