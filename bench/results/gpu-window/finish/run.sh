#!/bin/bash
# The cluster finish (session 16, call 2): base = main 52cbce1; rel = main + the relaxed second
# cluster arrive; pf = rel + the slice's MAW prefetched into L2 between the K and V passes.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 300 $B/hgca_gpu_tests --gtest_filter='*Window*:*Planner*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)" $R/tests.log | head -30
for r in 1 2 3; do for v in base rel pf; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 120 python3 bench/peers/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 bench/results/gpu-window/finish/summary.py $R base,rel | tee $R/summary_rel.txt
python3 bench/results/gpu-window/finish/summary.py $R base,pf | tee $R/summary_pf.txt
