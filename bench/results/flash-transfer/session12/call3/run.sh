#!/bin/bash
# Session 12, call 3: FlashH2D's launches chained by programmatic dependent launch (new, 00e51d5's
# first form: without the launch_dependents after the loop) against main's kernel (bt_main),
# alternated, 3 rounds; the ordering test (its first form: a long first launch of 1360 × 16 KB) of
# a build without the end wait; GPU and model tests.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for i in 1 2 3; do $B/gpu_tests_nowait --gtest_filter='FlashH2D.LaterWork*' 2>&1 | grep -E "OK|FAILED  \]|saw" | head -2; done
F='BM_H2D/(flash/block_KB:(4|16|64)/SMs:(4|8)|memcpy_batch/|memcpy_per_block/block_KB:16)'
for rep in 1 2 3; do for v in main new; do
  b=$B/hgca_bench_transfer; [ $v = main ] && b=$B/bt_main
  timeout 120 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/h2d_${v}_$rep.json > /dev/null 2>&1; echo "h2d $v $rep rc=$?"
done; done
timeout 240 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"; tail -2 $R/gpu_model_tests.log
# (then: tar the JSON and print summary.txt: one row per benchmark, columns main1 new1 … new3)
