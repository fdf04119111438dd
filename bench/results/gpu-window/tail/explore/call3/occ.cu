#include <cstdio>
#include <cuda_runtime.h>
__global__ void k(int* out) { extern __shared__ int s[]; unsigned sm; asm("mov.u32 %0, %%smid;" : "=r"(sm)); if (threadIdx.x == 0) out[blockIdx.x] = sm + s[0] * 0; }
int main() {
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int smem : {40 << 10, 76 << 10, 101 << 10, 200 << 10}) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int per_sm = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 128, smem);
    printf("smem %3d KB: %d/SM; slots in clusters of n:", smem >> 10, per_sm);
    for (int n = 1; n <= 16; ++n) {
      cudaLaunchConfig_t cfg{}; cfg.gridDim = dim3(n); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a{}; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = n; a.val.clusterDim.y = a.val.clusterDim.z = 1;
      cfg.attrs = &a; cfg.numAttrs = 1; int c = 0;
      if (cudaOccupancyMaxActiveClusters(&c, k, &cfg) != cudaSuccess) { cudaGetLastError(); c = -1; }
      printf(" %d:%d", n, c * n);
    }
    printf("\n");
  }
  // GPC map: clusters of 16 with 1 block/SM (max smem) — blocks of one cluster share a GPC.
  int smem = 200 << 10; cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int n : {2}) {
    int nb = 132 / n * n; int* d; cudaMalloc(&d, nb * 4); cudaMemset(d, 0xff, nb * 4);
    cudaLaunchConfig_t cfg{}; cfg.gridDim = dim3(nb); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute a{}; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = n; a.val.clusterDim.y = a.val.clusterDim.z = 1;
    cfg.attrs = &a; cfg.numAttrs = 1; cudaLaunchKernelEx(&cfg, k, d); cudaDeviceSynchronize();
  }
  return 0;
}
