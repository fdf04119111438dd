#!/bin/bash
# Session 10, call 2: the store scatter with fixed-size row copies ("new") against bd47dd2 ("base")
# and against new with non-temporal row stores ("nt"), alternated twice; the pool scatter into
# destinations beyond the L3 (pool_dram) beside the pool's 64 MB (pool).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
F='BM_Scatter/store_allocated_ahead/block_KB:16/threads:(1|16)/selected_pct:(1|10)/|BM_Scatter/pool(_dram)?/block_KB:16/threads:(1|16)/'
for rep in 1 2; do for v in base new nt; do
  timeout 120 $B/hgca_bench_store_$v --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
  timeout 90 $B/hgca_bench_transfer_$v --benchmark_filter='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys, collections
R = sys.argv[1]
rows = collections.defaultdict(dict)
for rep in (1, 2):
  for v in ("base", "new", "nt"):
    try:
      for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": rows[b["run_name"].replace("/real_time", "").replace("BM_Scatter/", "")][f"{v}{rep}"] = f'{b["bytes_per_second"] / 1e9:.1f}'
      for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        rows[n][f"{v}{rep}"] = f'{b["GBps_median"]:.1f} ({b["scatter_GBps"]:.1f})'
    except Exception as e: print(v, rep, e)
cols = [f"{v}{r}" for r in (1, 2) for v in ("base", "new", "nt")]
print("benchmark".ljust(70), *[c.rjust(12) for c in cols])
for n, d in rows.items(): print(n.ljust(70), *[d.get(c, "-").rjust(12) for c in cols])
PY
cat $R/summary.txt
