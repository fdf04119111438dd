#!/bin/bash
# Session 9, call 14: flash_store at 1 / 10 / 50 % selected (16 and 64 KB, 4 slots) beside the
# pool engine and the CUDA peers, in one run, twice: how much of the store path's cost the
# selection and context caches make.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do
  timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/block_KB:(16|64)/slots:4/threads:0/selected_pct:(1|10|50)/layers:1/|BM_D2H/flash_pool/block_KB:(16|64)/slots:4/|BM_D2H/memcpy_(batch|per_block)/block_KB:(16|64)/' --benchmark_format=json --benchmark_out=$R/d2h_$rep.json > /dev/null 2>&1; echo "d2h $rep rc=$?"
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
