// Experiment probe (not part of hgca): resident blocks of the cluster decode kernel (bf16, D 128)
// per cluster size, at G 4 and G 8, for slices of 1536, 2112 and 3072 keys.
#include <cuda_bf16.h>
#include <cstdio>
#include "gpu/window_attention_decode.cuh"
using namespace hgca::gpu::kernels;
int main() {
  auto* k = decode_split_kernel<__nv_bfloat16, 128, true>;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)decode_split_smem(3072, 8, 128));
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int g : {1, 4, 8})
    for (int keys : {1536, 2112, 2752, 3072}) {
      const size_t smem = decode_split_smem(keys, g, 128);
      int per_sm = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kDecThreads, smem);
      std::printf("G%d keys%d smem%zu per_sm %d | resident by cluster size:", g, keys, smem, per_sm);
      for (int n = 1; n <= 16; ++n) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(n);
        cfg.blockDim = dim3(kDecThreads);
        cfg.dynamicSmemBytes = smem;
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = n;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int c = 0;
        if (cudaOccupancyMaxActiveClusters(&c, k, &cfg) != cudaSuccess) { cudaGetLastError(); c = -1; }
        std::printf(" %d:%d", n, c * n);
      }
      std::printf("\n");
    }
}
