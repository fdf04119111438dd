#!/bin/bash
# Session 10, call 1: where the store scatter's user time goes (perf cpu-clock, user only) against
# the pool scatter; HEAD against a build whose evict_and_insert runs without nested parallel_fors.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
lscpu | grep -E "Model name|^CPU\(s\)|L3"; cat /proc/sys/kernel/perf_event_paranoid
for f in 'store_allocated_ahead/block_KB:16/threads:16/selected_pct:1' 'pool/block_KB:16/threads:16'; do
  n=$(echo $f | cut -d/ -f1)
  $P record -q -e cpu-clock -F 1999 --all-user -o $R/$n.data $B/hgca_bench_store --benchmark_filter="BM_Scatter/$f/" --benchmark_min_time=2 2>&1 | grep -E "real_time|rror"
  $P report -i $R/$n.data --no-children --sort=dso,sym --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -45 | cut -c1-180 > $R/${n}_flat.txt
  echo "== $n"; head -25 $R/${n}_flat.txt
done
$P record -q -e cpu-clock -F 199 --all-user --call-graph=dwarf,8192 -o $R/cg.data $B/hgca_bench_store --benchmark_filter="BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:1/" --benchmark_min_time=1 2>&1 | grep -E "real_time|rror"
timeout 200 $P report -i $R/cg.data --children --stdio --percent-limit 2 -G 2>/dev/null | grep -v "^$" | head -400 | cut -c1-200 > $R/cg.txt
rm -f $R/*.data
for rep in 1 2; do for v in head serial; do
  s=$B/hgca_bench_store; t=$B/hgca_bench_transfer
  [ $v = serial ] && s=${s}_serial && t=${t}_serial
  timeout 60 $s --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:(1|10)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
  timeout 60 $t --benchmark_filter='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2):
  for v in ("head", "serial"):
    for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(rep, v, b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f}')
    for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, v, n, f'{b["GBps_median"]:.1f} (scatter {b["scatter_GBps"]:.1f})')
PY
rm -f $R/*.json
cat $R/summary.txt
