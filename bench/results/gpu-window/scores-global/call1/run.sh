#!/bin/bash
# Session 14, call 1: scores in the workspace (no shared-memory scores: 3 blocks per SM) against main 5afe518 (base); the bench binaries were built from 5afe518 + call1/scores_global_first.patch (new) and 5afe518 (base).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 400 $B/hgca_gpu_tests  > $R/tests.log 2>&1; echo "tests rc=$?"; tail -5 $R/tests.log; grep -E "^\[  FAILED" $R/tests.log | head -30
for r in 1 2 3; do for v in base new; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 90 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 $D/summary.py $R | tee $R/summary.txt
