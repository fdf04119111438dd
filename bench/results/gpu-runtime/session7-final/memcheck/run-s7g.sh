#!/bin/bash
# Session 7: compute-sanitizer memcheck over the GPU suite without the parameterized sweeps.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 520 compute-sanitizer --tool memcheck --leak-check no $B/hgca_gpu_tests --gtest_filter='-*Sweep*:*SparseAttention.*:*FlashH2DSpans*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran|Invalid" $R/memcheck.log | head -8
grep -c "^\[       OK" $R/memcheck.log
(cd $OUT && tar czf results.tgz r && rm -rf r)
