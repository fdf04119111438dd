// The AVX-512 kernels with AVX512-BF16 dot products for bf16 K (vdpbf16ps): the same source as
// sparse_avx512.cpp, compiled with -mavx512bf16 under its own namespace; chosen only when CPUID
// reports avx512_bf16.
#define HGCA_AVX512_BF16 1
#include "sparse_avx512.cpp"
