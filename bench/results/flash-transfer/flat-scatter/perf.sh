#!/bin/bash
# Session 15, call 3: where the flat scatter (call 2's, bs_flat) loses against main (bs_base):
# perf (carried from the dev machine, cpu-clock, user and kernel) over BM_Scatter at 16 threads.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
S='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:10'
for v in base flat; do
  HGCA_BENCH_STORE_WRITES=streamed $B/perf record -e cpu-clock -F 2000 -g -o $R/perf_$v.data $B/bs_$v --benchmark_filter="$S" --benchmark_min_time=3 2>&1 | grep BM_
  $B/perf report -i $R/perf_$v.data --no-children --stdio --sort sym 2>/dev/null | grep -v '^$' | grep '%' | grep -v '^ *|' | grep -v '^ *-' | head -30 | cut -c1-180 > $R/self_$v.txt
  $B/perf report -i $R/perf_$v.data --children --stdio --sort sym 2>/dev/null | grep -v '^$' | grep '%' | grep -v '^ *|' | grep -v '^ *-' | head -40 | cut -c1-180 > $R/children_$v.txt
  rm -f $R/perf_$v.data
done
for v in base flat; do echo "== $v self"; head -14 $R/self_$v.txt | cut -c1-150; done
