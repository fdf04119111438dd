#!/bin/bash
# Session 13, call 6: the goal shape's kernel duration under ncu (clocks as they are) against the
# event-timed per-call time of back-to-back calls; main's hgca_bench_gpu (4fc73b1's kernels).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
for b in 16 64; do
  F="WindowDecode/batch:$b/hkv:8/window:16384"
  $B/hgca_bench_gpu --benchmark_filter="$F" 2>&1 | grep -E "^BM_" | sed 's/ \+/ /g' | grep -o "BM_[^ ]*\|kv_TBps=[0-9.]*\|us=[0-9.]*" | tr '\n' ' '; echo
  timeout 200 ncu --clock-control none --kernel-name regex:decode_cluster --launch-skip 8 --launch-count 4 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x,launch__occupancy_cluster_pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
    $B/hgca_bench_gpu --benchmark_filter="$F" > $R/ncu_b$b.log 2>&1; echo "ncu rc=$?"
  grep -E "decode_cluster|gpu__time|dram__|launch__|sm__warps" $R/ncu_b$b.log | sed 's/ \+/ /g' | head -40
done
