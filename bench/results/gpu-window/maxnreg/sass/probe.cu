// One bf16 D 128 decode kernel alone, for mk.sh: -DMAIN main's decode_split_kernel<T, D, kCluster>
// (the cluster instance, or with -DSPLIT the split + combine one); else this branch's
// decode_cluster_kernel<T, D> (with -DSPLIT decode_split_kernel<T, D>).
#include "gpu/window_attention_decode.cuh"
namespace hgca::gpu::kernels {
using T = __nv_bfloat16;
#if defined(MAIN) && defined(SPLIT)
template __global__ void decode_split_kernel<T, 128, false>(KernelArgs, SeqBatch, DecodeLayout);
#elif defined(MAIN)
template __global__ void decode_split_kernel<T, 128, true>(KernelArgs, SeqBatch, DecodeLayout);
#elif defined(SPLIT)
template __global__ void decode_split_kernel<T, 128>(KernelArgs, SeqBatch, DecodeLayout);
#else
template __global__ void decode_cluster_kernel<T, 128>(KernelArgs, SeqBatch, DecodeLayout);
#endif
}
