#!/bin/bash
# The cluster finish (session 16): base = main 52cbce1; new = branch finish (the slice's MAW by
# cp.async into the stages once free, relaxed second cluster arrive); rel = main + the relaxed
# arrive only.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 300 $B/hgca_gpu_tests --gtest_filter='*Window*:*Planner*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)" $R/tests.log | head -30
for r in 1 2 3; do for v in base new rel; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 120 python3 bench/peers/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 bench/results/gpu-window/finish/summary.py $R base,new | tee $R/summary.txt
python3 bench/results/gpu-window/finish/summary.py $R base,rel | tee $R/summary_rel.txt
