#!/bin/bash
# Session 18, call 2. (a) Placement or transient? hgca_bench_gpu_exp2 is main 988d225's bench with
# exp-sleep-after-alloc.patch: it sleeps HGCA_EXP_SLEEP_AFTER_ALLOC_MS after allocating and filling
# a shape (after the previous shape was freed), before timing it. (b) The sweeps with every shape's
# memory kept: hgca_bench_gpu_new (this commit's bench) and bench/peers/torch_sdpa_window.py (this
# commit's peer), alternated, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; R=$OUT; mkdir -p $R
G='batch:16/hkv:8/window:16384/'; H='batch:64/hkv:32/window:16384/'
for r in 1 2; do
  timeout 90 $D/bin/hgca_bench_gpu_exp2 --benchmark_filter="WindowDecode/($H|$G)" 2>/dev/null | grep "$G" | awk '{print "after_heavy_freed", $2}'
  HGCA_EXP_SLEEP_AFTER_ALLOC_MS=10000 timeout 90 $D/bin/hgca_bench_gpu_exp2 --benchmark_filter="WindowDecode/($H|$G)" 2>/dev/null | grep "$G" | awk '{print "after_heavy_freed_alloc_sleep10s", $2}'
done | tee $R/placement.txt
for r in 1 2 3; do
  echo "# round $r $(date +%T)" >&2
  timeout 200 $D/bin/hgca_bench_gpu_new --benchmark_filter='WindowDecode/' --benchmark_format=json \
    --benchmark_out=$R/hgca_round$r.json >/dev/null 2>$R/hgca_round$r.err
  timeout 300 python3 bench/peers/torch_sdpa_window.py > $R/sdpa_round$r.json 2>$R/sdpa_round$r.err
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python3 bench/results/gpu-window/sweep-context/summary.py $R | tee $R/summary.txt
