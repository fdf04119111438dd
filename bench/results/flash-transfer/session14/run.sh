#!/bin/bash
# Session 14, call 4: FlashD2H's staging footprint. The benchmark's step (kSeqs sequences × one
# 16 KB block per head, K and V) at kSeqs 32 (main: 8 MB per slot, 32 MB for 4 slots), 8 (8 MB in all)
# and 4 (4 MB in all); the same 256 MB per iteration. Alternated, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
F='BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:1|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0|BM_D2H/flash_copy_only/block_KB:16/slots:2'
for r in 1 2 3; do for n in 32 8 4; do
  timeout 120 $B/bt_$n --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/seqs${n}_$r.json > /dev/null 2>&1 || echo "$n $r failed"
done; done
python3 - $R <<'PY'
import json, sys, glob
R = sys.argv[1]; rows = {}
for n in (32, 8, 4):
  for r in (1, 2, 3):
    try:
      for b in json.load(open(f"{R}/seqs{n}_{r}.json"))["benchmarks"]:
        k = b["name"].split("/iter")[0].replace("BM_D2H/", "")
        rows.setdefault(k, {}).setdefault(n, []).append(f'{b["GBps_median"]:.1f} ({b.get("copy_GBps",0):.0f}/{b.get("scatter_GBps",0):.0f})')
    except Exception as e: print(n, r, e)
for k, d in rows.items():
  print(k)
  for n in (32, 8, 4): print(f"  seqs {n:2d}: " + "  ".join(d.get(n, [])))
PY
