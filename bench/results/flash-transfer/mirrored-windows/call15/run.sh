#!/bin/bash
# Session 9, call 15: the store fill with rows of a compile-time size (inline copies, variant
# "inline") against libc memcpy calls (HEAD), alternated twice: flash_store at 16 / 64 KB, 1 and
# 10 % selected, 4 slots; the store scatter alone at 16 threads.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do for v in head inline; do
  t=$B/hgca_bench_transfer; s=$B/hgca_bench_store; [ $v = inline ] && t=${t}_inline && s=${s}_inline
  timeout 100 $t --benchmark_filter='BM_D2H/flash_store/block_KB:(16|64)/slots:4/threads:0/selected_pct:(1|10)/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
  timeout 60 $s --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:(16|64)/threads:(1|16)/selected_pct:1/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2):
  for v in ("head", "inline"):
    for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, v, n, f'{b["GBps_median"]:.1f} (scatter {b["scatter_GBps"]:.1f})')
    for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(rep, v, b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f}')
PY
cat $R/summary.txt; rm -f $R/*.json
