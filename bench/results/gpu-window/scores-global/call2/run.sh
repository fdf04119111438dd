#!/bin/bash
# Session 14, call 2: new2 = scores through the workspace, V-pass scores staged by cp.async with the tiles,
# finish loads of all heads together; new = call 1's form; base = main 5afe518.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 300 $B/hgca_gpu_tests --gtest_filter='*Window*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)" $R/tests.log | head -30
for r in 1 2 3; do for v in base new2; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 90 $B/hgca_bench_gpu_new --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/new_1.json > /dev/null 2>&1 || echo "new failed"
timeout 90 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 $D/summary.py $R base,new2 | tee $R/summary.txt
python3 $D/summary.py $R new,new2 | grep -E "hkv:8/window:16384|hkv:8/window:1024" 
