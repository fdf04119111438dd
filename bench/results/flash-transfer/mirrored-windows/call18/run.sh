#!/bin/bash
# Session 9, call 18: hardware counters (if the machine gives them) for the store scatter against the
# pool scatter, 16 KB, 16 threads, 1 % selected.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
$P list hw cache 2>&1 | head -30
for f in 'store_allocated_ahead/block_KB:16/threads:16/selected_pct:1' 'pool/block_KB:16/threads:16'; do
  $P stat -e cycles:u,instructions:u,cache-misses:u,dTLB-load-misses:u,dTLB-store-misses:u,LLC-load-misses:u,LLC-store-misses:u -o $R/stat.txt $B/hgca_bench_store --benchmark_filter="BM_Scatter/$f/" --benchmark_min_time=2 2>&1 | grep real_time
  cat $R/stat.txt | grep -v "^$"
done
