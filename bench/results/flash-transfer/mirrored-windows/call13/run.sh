#!/bin/bash
# Session 9, call 13: FlashD2H into long-lived stores (flash_store_steady: stores kept over the
# benchmark in memory taken up front) against fresh stores each iteration (flash_store), 16 and
# 64 KB, 10 and 50 % selected, 4 slots; the pool engine in the same run. Twice.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do
  timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store(_steady)?/block_KB:(16|64)/slots:4/threads:0/selected_pct:(10|50)/layers:1/|BM_D2H/flash_pool/block_KB:(16|64)/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_$rep.json > /dev/null 2>&1; echo "d2h $rep rc=$?"
done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
rows = {}
for rep in (1, 2):
    for b in json.load(open(f"{R}/d2h_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        rows.setdefault(n, []).append(b)
for n, bs in rows.items():
    print(n, " | ".join(f'{b["GBps_median"]:.1f} (copy {b.get("copy_GBps", 0):.1f}, scatter {b.get("scatter_GBps", 0):.1f}, sel {b.get("selected_fraction", 0):.3f})' for b in bs))
PY
