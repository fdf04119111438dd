// The re-evaluation job: the appended queries' softmax weights over the store snapshot (the `A_cpu`
// of Algorithm 1, line 20), on the CPU engine's SIMD kernels (only K is read; no output is formed).
#include "kvmgr/reevaluation.hpp"

#include <algorithm>
#include <new>

#include <oneapi/tbb/parallel_for.h>

#include "dtype.hpp"

namespace hgca::kvmgr {

std::shared_ptr<Reevaluation> snapshot_for_reevaluation(const DramStore& store, const std::byte* q,
                                                        int32_t n_rows, int32_t n_q_heads,
                                                        int32_t head_dim, float sm_scale,
                                                        DType dtype, cpu::SparseIsa isa) {
  auto job = std::make_shared<Reevaluation>();
  for (int32_t h = 0; h < store.n_kv_heads(); ++h) job->blocks.push_back(store.store(h).blocks);
  job->store_size = store.size();
  job->block_tokens = store.block_tokens();
  const std::size_t bytes =
      static_cast<std::size_t>(n_rows) * n_q_heads * head_dim * dtype_size(dtype);
  job->q.assign(q, q + bytes);
  job->n_rows = n_rows;
  job->group = n_q_heads / store.n_kv_heads();
  job->head_dim = head_dim;
  job->sm_scale = sm_scale;
  job->dtype = dtype;
  job->isa = isa;
  return job;
}

void run_reevaluation(Reevaluation& job) noexcept {
  try {
    const auto hkv = static_cast<int32_t>(job.blocks.size());
    const int64_t n = job.store_size, hq = int64_t{hkv} * job.group;
    const std::size_t per_chunk = static_cast<std::size_t>(job.group) * n;  // one [group, n] sum
    // A long append's rows in chunks, so that there are tasks beyond the KV heads; each chunk sums
    // into its own buffer and the chunks add up in order, so the weights are the same at any
    // thread count. Their buffers stay within kChunkBytes (one chunk per head past it).
    constexpr int32_t kChunkRows = 64, kMaxChunks = 8;
    constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
    const auto fit = static_cast<int32_t>(
        std::min<std::size_t>(kMaxChunks, kChunkBytes / std::max<std::size_t>(1, hkv * per_chunk * sizeof(float))));
    const int32_t chunks = std::clamp((job.n_rows + kChunkRows - 1) / kChunkRows, 1, std::max(1, fit));
    const int32_t chunk_rows = (job.n_rows + chunks - 1) / chunks;
    std::vector<float> acc(static_cast<std::size_t>(hkv) * chunks * per_chunk, 0.0f);  // [head][chunk][g][t]
    const std::size_t q_row_bytes = static_cast<std::size_t>(hq) * job.head_dim * dtype_size(job.dtype);
    tbb::parallel_for(int32_t{0}, hkv * chunks, [&](int32_t task) {
      const int32_t h = task / chunks, r0 = task % chunks * chunk_rows;
      const int32_t rows = std::min(chunk_rows, job.n_rows - r0);
      if (rows <= 0) return;
      std::vector<cpu::arch::KvRun> runs;
      int64_t left = n;
      for (const auto& block : job.blocks[h]) {
        if (left == 0) break;
        const int64_t take = std::min<int64_t>(left, job.block_tokens);
        runs.push_back({block->k(), block->v(), take});
        left -= take;
      }
      std::vector<float> work(static_cast<std::size_t>(cpu::arch::weights_work_floats(rows, job.group, job.head_dim, n)));
      cpu::arch::WeightsParams p;
      p.n = n;
      p.runs = runs.data();
      p.n_runs = static_cast<int32_t>(runs.size());
      p.q = job.q.data() + r0 * q_row_bytes + static_cast<std::size_t>(h) * job.group * job.head_dim * dtype_size(job.dtype);
      p.q_row_stride = hq * job.head_dim;
      p.n_rows = rows;
      p.group = job.group;
      p.head_dim = job.head_dim;
      p.sm_scale = job.sm_scale;
      p.acc = acc.data() + static_cast<std::size_t>(task) * per_chunk;
      p.work = work.data();
      cpu::add_key_weights(job.isa, job.dtype, p);
    });
    // Per key: the max over the group of the summed weight, over the rows (chunks in order).
    job.weights.assign(static_cast<std::size_t>(hkv), std::vector<float>(static_cast<std::size_t>(n)));
    const float inv_rows = 1.0f / static_cast<float>(job.n_rows);
    for (int32_t h = 0; h < hkv; ++h) {
      const float* head = acc.data() + static_cast<std::size_t>(h) * chunks * per_chunk;
      for (int64_t t = 0; t < n; ++t) {
        float best = 0.0f;
        for (int32_t g = 0; g < job.group; ++g) {
          float sum = 0.0f;
          for (int32_t c = 0; c < chunks; ++c) sum += head[c * per_chunk + g * n + t];
          best = std::max(best, sum);
        }
        job.weights[h][t] = best * inv_rows;
      }
    }
    job.done.store(true, std::memory_order_release);
  } catch (const std::bad_alloc&) {
    // Host memory ran out: the job is dropped (never done, so never published) and the store
    // keeps its selection; no entry is lost. It runs where nothing could report it.
    job.weights.clear();
  }
}

}  // namespace hgca::kvmgr
