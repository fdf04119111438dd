#!/bin/bash
# Session 13, call 7: the goal shape (batch 16, Hkv 8, W 16384) with the cluster path's slice count
# forced (HGCA_FORCE_CLUSTER_N, a probe build of 4fc73b1's kernels + planner print), 2 rounds, and
# batch 64; then SDPA.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
HGCA_PRINT_PLAN=1 $B/hgca_bench_gpu_plan --benchmark_filter='WindowDecode/batch:16/hkv:8/window:16384' 2>&1 | grep -E "^G |^chosen"
for r in 1 2; do for n in 0 7 8 9 10 11 12 13 14 16; do
  for b in 16 64; do
    x=$(HGCA_FORCE_CLUSTER_N=$n $B/hgca_bench_gpu_plan --benchmark_filter="WindowDecode/batch:$b/hkv:8/window:16384" 2>/dev/null | grep -o "cluster=[0-9]\|us=[0-9.]*" | tr '\n' ' ')
    echo "round $r n $n batch $b: $x"
  done
done; done | tee $R/forced.txt
timeout 90 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log
python3 -c "
import json; [print('sdpa', x['batch'], x['hkv'], x['window'], x['us']) for x in json.load(open('$R/sdpa.json'))['results'] if x['window'] == 16384 and x['hkv'] == 8]"
