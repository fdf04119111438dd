#!/bin/bash
# Session 7: compute-sanitizer racecheck over the GPU suite without the parameterized sweeps.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 330 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter='-*Sweep*:*SparseAttention.*:*FlashH2DSpans*' > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED|tests ran|Invalid" $R/racecheck.log | head -8
grep -c "^\[       OK" $R/racecheck.log
(cd $OUT && tar czf results.tgz r && rm -rf r)
