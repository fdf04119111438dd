#!/bin/bash
# Session 9, call 11: perf (carried) on the store scatter alone, 16 KB, 16 threads, blocks
# allocated ahead: inclusive time per function (call graphs), and the same at 1 thread.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
for th in 16 1; do
  $P record --all-user -e cpu-clock -F 800 --call-graph dwarf,8192 -o $R/s$th.data $B/hgca_bench_store --benchmark_filter="BM_Scatter/store_allocated_ahead/block_KB:16/threads:$th/" --benchmark_min_time=1 2>&1 | grep -E "real_time|rror"
  $P report -i $R/s$th.data --children --stdio --sort sym --no-demangle -g none --percent-limit 1.5 2>&1 | grep -E "^ +[0-9]" | cut -c1-200 > $R/children_$th.txt
  $P report -i $R/s$th.data --no-children --stdio --sort dso,sym -g none --percent-limit 0.7 2>&1 | grep -E "^ +[0-9]" | cut -c1-200 > $R/self_$th.txt
  rm -f $R/s$th.data
  echo "== $th threads: inclusive"; head -40 $R/children_$th.txt | cut -c1-150; echo "== self"; head -20 $R/self_$th.txt | cut -c1-150
done
