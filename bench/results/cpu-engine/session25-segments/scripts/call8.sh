#!/bin/bash
# Session 25, call 8: the CPU engine over the balance workload (per-head selected lengths 1-30 % of
# 65536, G 4, D 128, 1.5 GiB of selected K+V, all 16 threads) read contiguously and in segments as
# the runtime's context caches now hold them (first segment 512 rows, over the same memory), bf16
# and fp16, 3 rounds alternated; the build of 4accdca plus this benchmark case.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call8; mkdir -p $R
for r in 1 2 3; do
  timeout 100 $D/bin/hgca_bench_cpu --benchmark_filter='BM_DecodeVaried' --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 bench/results/cpu-engine/session25-segments/summary.py $R/r*.json | tee $R/summary.txt
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
