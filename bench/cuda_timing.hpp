// What the GPU benchmarks share: skipping on a failed CUDA call, and CUDA-event timing of one
// iteration's work on a stream.
#pragma once

#include <cuda_runtime.h>

#include <string>

/// In a benchmark function: a failing CUDA call skips the benchmark, naming the call and the error.
#define BENCH_CUDA(expr)                                                                      \
  do {                                                                                        \
    if (cudaError_t bench_e = (expr); bench_e != cudaSuccess) {                               \
      state.SkipWithError((std::string(#expr) + ": " + cudaGetErrorString(bench_e)).c_str()); \
      return;                                                                                 \
    }                                                                                         \
  } while (0)

namespace hgca::bench {

/// The GPU time of what `launch` (returning a cudaError_t) enqueues on `s`, between two events, in *ms.
template <typename F>
cudaError_t event_ms(cudaStream_t s, cudaEvent_t start, cudaEvent_t stop, F&& launch, float* ms) {
  if (cudaError_t e = cudaEventRecord(start, s); e != cudaSuccess) return e;
  if (cudaError_t e = launch(); e != cudaSuccess) return e;
  if (cudaError_t e = cudaEventRecord(stop, s); e != cudaSuccess) return e;
  if (cudaError_t e = cudaEventSynchronize(stop); e != cudaSuccess) return e;
  return cudaEventElapsedTime(ms, start, stop);
}

}  // namespace hgca::bench
