#!/bin/bash
# Session 9, call 12: the store scatter alone by selected share (new selected_pct argument) against
# the pool scatter, 1 and 16 threads; perf call graphs at 16 threads, 10 % selected.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
timeout 200 $B/hgca_bench_store --benchmark_filter='BM_Scatter/(store_allocated_ahead|store_own_memory|pool)/block_KB:(16|64)/threads:(1|16)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/scatter.json > /dev/null 2>&1; echo "scatter rc=$?"
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
$P record --all-user -e cpu-clock -F 800 --call-graph dwarf,8192 -o $R/s.data $B/hgca_bench_store --benchmark_filter="BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:10/" --benchmark_min_time=1 2>&1 | grep -E "real_time|rror"
$P report -i $R/s.data --children --stdio --sort sym -g none --percent-limit 1.5 2>&1 | grep -E "^ +[0-9]" | cut -c1-200 > $R/children_16_pct10.txt
$P report -i $R/s.data --no-children --stdio --sort dso,sym -g none --percent-limit 0.7 2>&1 | grep -E "^ +[0-9]" | cut -c1-200 > $R/self_16_pct10.txt
rm -f $R/s.data
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for b in json.load(open(f"{R}/scatter.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f} GB/s', f'sel {b.get("selected_fraction", 0):.3f}')
PY
head -30 $R/children_16_pct10.txt | cut -c1-140
