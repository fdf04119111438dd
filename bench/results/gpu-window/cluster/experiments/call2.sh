#!/bin/bash
# Call 2 (experiment build: balanced cluster slices, MAW loads before stores): window decode tests,
# the sweep with each path forced.
D=.device-gqa-cluster
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
timeout 40 $B/hgca_gpu_tests --gtest_filter='*Decode*:*Graph*' > $OUT/tests_decode.log 2>&1; echo "decode tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/tests_decode.log | head -8
grep -B2 -A6 "Failure" $OUT/tests_decode.log | head -30
for m in cluster combine; do
  HGCA_EXP_DECODE=$m HGCA_EXP_PRINT=1 timeout 60 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$OUT/gpu_$m.json --benchmark_out_format=json > /dev/null 2> $OUT/plan_$m.log
  echo "bench $m rc=$?"
done
python3 $D/table.py cluster=$OUT/gpu_cluster.json combine=$OUT/gpu_combine.json
