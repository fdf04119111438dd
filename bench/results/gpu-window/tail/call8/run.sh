#!/bin/bash
# Session 17, call 8: why the goal shape runs slower inside the sweep. The committed build (new),
# goal shape alone, after batch 64 Hkv 32 W 16384 in the same process, after the whole sweep's
# shapes before it, and after batch 1 Hkv 8 W 16384 only; 3 rounds each, alternated.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin/hgca_bench_gpu_new; R=$OUT; mkdir -p $R
G='batch:16/hkv:8/window:16384/'
for r in 1 2 3; do
  timeout 60 $B --benchmark_filter="WindowDecode/$G" 2>/dev/null | grep "$G" | awk '{print "alone", $2}'
  timeout 60 $B --benchmark_filter="WindowDecode/(batch:64/hkv:32/window:16384|$G)" 2>/dev/null | grep "$G" | awk '{print "after_b64_hkv32", $2}'
  timeout 60 $B --benchmark_filter="WindowDecode/(batch:1/hkv:8/window:16384|$G)" 2>/dev/null | grep "$G" | awk '{print "after_b1_hkv8", $2}'
  timeout 90 $B --benchmark_filter="WindowDecode/batch:(1|16|64)/" 2>/dev/null | grep "$G" | awk '{print "in_sweep", $2}'
done | tee $R/summary.txt
