#!/bin/bash
# Call 1 (experiment build): window tests, racecheck of the cluster path, the sweep with the
# cluster path forced and with split + combine forced.
D=.device-gqa-cluster
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/machine.txt; date -u +%FT%TZ >> $OUT/machine.txt
timeout 60 $B/hgca_gpu_tests --gtest_filter='*Window*' > $OUT/tests_window.log 2>&1; echo "window tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $OUT/tests_window.log | head -20
grep -B2 -A6 "Failure" $OUT/tests_window.log | head -40
timeout 45 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter='All/WindowAttentionSweep.DecodeRaggedWrapped/bf16_G4_D128:All/WindowAttentionSweep.DecodeRaggedWrapped/f16_G8_D64:WindowAttention.DecodeWithoutWorkspace' > $OUT/racecheck1.log 2>&1
echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck1.log | head -5
for m in cluster combine; do
  HGCA_EXP_DECODE=$m HGCA_EXP_PRINT=1 timeout 100 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$OUT/gpu_$m.json --benchmark_out_format=json > $OUT/bench_$m.log 2> $OUT/plan_$m.log
  echo "bench $m rc=$?"
done
python3 $D/table.py cluster=$OUT/gpu_cluster.json combine=$OUT/gpu_combine.json
