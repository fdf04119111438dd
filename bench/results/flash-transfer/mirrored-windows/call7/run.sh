#!/bin/bash
# Session 9, call 7: flash_store with one layer's lane and with two layers' lanes side by side
# (the runtime runs a scatter lane per layer), 4 / 16 / 64 KB, 2 and 4 slots, 10 and 50 % selected;
# in the same run the pool engine and the CUDA peers at 16 KB. Twice.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do
  timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/block_KB:(4|16|64)/slots:(2|4)/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/' --benchmark_format=json --benchmark_out=$R/d2h_$rep.json > /dev/null 2>&1; echo "d2h $rep rc=$?"
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
