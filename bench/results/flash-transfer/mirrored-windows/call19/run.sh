#!/bin/bash
# Session 9, call 19 (experiment binary, not committed): the store scatter with a barrier per step
# (as committed) against each sequence's 8 evictions in one task (NOBARRIER=1), 16 threads.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do for v in barrier nobarrier; do
  e=""; [ $v = nobarrier ] && e="NOBARRIER=1"
  env $e timeout 60 $B/hgca_bench_store_exp --benchmark_filter='BM_Scatter/(store_allocated_ahead/block_KB:(16|64)/threads:16/selected_pct:(1|10)|pool/block_KB:16/threads:16)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v -v r=$rep '{print r, v, $1, $NF, $(NF-1)}'
done; done
