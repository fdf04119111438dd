// The re-evaluation job: dense attention of the appended queries over the store snapshot, keeping
// only the weights (the `A_cpu` of Algorithm 1, line 20).
#include "kvmgr/reevaluation.hpp"

#include <algorithm>
#include <new>

#include <oneapi/tbb/parallel_for.h>

#include "cpu/attention_host.hpp"
#include "dtype.hpp"

namespace hgca::kvmgr {

std::shared_ptr<Reevaluation> snapshot_for_reevaluation(const DramStore& store, const std::byte* q,
                                                        int32_t n_rows, int32_t n_q_heads,
                                                        int32_t head_dim, float sm_scale,
                                                        DType dtype) {
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
  return job;
}

void run_reevaluation(Reevaluation& job) noexcept {
  try {
    detail::dispatch_dtype(job.dtype, [&]<typename T>(T) {
      const auto hkv = static_cast<int32_t>(job.blocks.size());
      const int64_t hq = static_cast<int64_t>(hkv) * job.group;
      const auto* q = reinterpret_cast<const T*>(job.q.data());
      job.weights.assign(static_cast<std::size_t>(hkv), {});
      // A task per KV head: the heads are independent, and shorter tasks let a worker of the
      // low-priority arena that runs re-evaluations leave for a step's work sooner.
      tbb::parallel_for(int32_t{0}, hkv, [&](int32_t h) {
        std::vector<float> o(static_cast<std::size_t>(job.n_rows) * job.group * job.head_dim);
        std::vector<float> lse(static_cast<std::size_t>(job.n_rows) * job.group);
        std::vector<cpu::KvSegment<T>> segments;
        int64_t left = job.store_size;
        for (const auto& block : job.blocks[h]) {
          if (left == 0) break;
          const int64_t n = std::min<int64_t>(left, job.block_tokens);
          segments.push_back({reinterpret_cast<const T*>(block->k()), reinterpret_cast<const T*>(block->v()), n,
                              job.head_dim});
          left -= n;
        }
        job.weights[h].resize(static_cast<std::size_t>(job.store_size));
        cpu::GroupAttentionParams<T> p;
        p.q = q + static_cast<int64_t>(h) * job.group * job.head_dim;
        p.q_row_stride = hq * job.head_dim;
        p.n_rows = job.n_rows;
        p.group = job.group;
        p.head_dim = job.head_dim;
        p.sm_scale = job.sm_scale;
        p.segments = segments;
        p.o = o.data();
        p.o_row_stride = static_cast<int64_t>(job.group) * job.head_dim;
        p.lse = lse.data();
        p.lse_row_stride = job.group;
        p.weights = job.weights[h].data();
        cpu::attend_group(p);
      });
    });
    job.done.store(true, std::memory_order_release);
  } catch (const std::bad_alloc&) {
    // Host memory ran out: the job is dropped (never done, so never published) and the store
    // keeps the selection it has; no entry is lost. It runs where nothing could report it.
    job.weights.clear();
  }
}

}  // namespace hgca::kvmgr
