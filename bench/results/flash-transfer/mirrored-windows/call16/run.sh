#!/bin/bash
# Session 9, call 16: how the store scatter scales with threads (1 % selected: the fill and the
# bookkeeping only) against the pool scatter; page faults and context switches at 16 threads.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
timeout 300 $B/hgca_bench_store --benchmark_filter='BM_Scatter/(store_allocated_ahead|store_own_memory)/block_KB:16/threads:[0-9]+/selected_pct:1/|BM_Scatter/pool/block_KB:16/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/scaling.json > /dev/null 2>&1; echo "scaling rc=$?"
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
for v in store_allocated_ahead store_own_memory; do
  $P stat -e page-faults,context-switches,cpu-migrations,task-clock -o $R/stat_$v.txt $B/hgca_bench_store --benchmark_filter="BM_Scatter/$v/block_KB:16/threads:16/selected_pct:1/" --benchmark_min_time=2 2>&1 | grep real_time
  grep -E "page-faults|context-switches|migrations|task-clock|elapsed" $R/stat_$v.txt
done
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys
R = sys.argv[1]
for b in json.load(open(f"{R}/scaling.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median": print(b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f}')
PY
