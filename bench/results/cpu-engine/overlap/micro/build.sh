#!/bin/sh
# build.sh SRCDIR OUT [flags]
S=$1; O=$2; shift 2
g++ -O3 -std=c++20 -march=x86-64 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c -mavx512bf16 -fopenmp-simd -DNDEBUG \
  -DHGCA_HAVE_AVX512BF16_KERNELS -DHGCA_AVX512_BF16=1 -I$S/src -I$S/include "$@" micro.cpp -o $O
