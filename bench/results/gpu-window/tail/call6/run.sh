#!/bin/bash
# Session 17, call 6: the cluster path's tail launch (plan_tail) against main, with its tests.
# base = main 8ca6cd0's hgca_bench_gpu; new = this branch. Goal shape alone, alternated with SDPA
# alone, 5 rounds; then the whole WindowDecode sweep, alternated, 2 rounds. SM clocks logged.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 250 > $R/clocks.csv &
SMI=$!
timeout 240 $B/hgca_gpu_tests --gtest_filter='*Window*:*Planner*:CudaGraph*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]" $R/tests.log | head -20
timeout 200 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter='WindowAttention.ClusterTailLaunchDecode' > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck.log | head -3
G='WindowDecode/batch:16/hkv:8/window:16384/'
for r in 1 2 3 4 5; do
  for v in base new; do timeout 60 $B/hgca_bench_gpu_$v --benchmark_filter="$G" --benchmark_format=json --benchmark_out=$R/g${v}_$r.json > /dev/null 2>&1 || echo "g $v $r failed"; done
  timeout 60 python3 -c "import sys,json; sys.path.insert(0,'bench/peers'); import torch_sdpa_window as t; print(json.dumps(t.bench(16,8,16384)))" >> $R/sdpa_alone.txt 2>> $R/sdpa.log
done
for r in 1 2; do for v in base new; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/s${v}_$r.json > /dev/null 2>&1 || echo "s $v $r failed"
done; done
timeout 150 python3 bench/peers/torch_sdpa_window.py > $R/sdpa_sweep.json 2>> $R/sdpa.log; echo "sdpa sweep rc=$?"
kill $SMI
python3 bench/results/gpu-window/tail/summary.py $R | tee $R/summary.txt
cd $R && tar czf json.tgz g*.json s*.json && rm -f g*.json s*.json
