#!/bin/bash
# Session 12, call 2: call 1's D2H part with the filter fixed, 3 rounds: FlashD2H into the stores
# over 1 and 4 laps (256 MB / 1 GB per iteration), main (97fb827's library) against main +
# context-row prefetch (bt_prefetch, context_prefetch.patch), alternated. HGCA_BENCH_STORE_WRITES
# unset: auto.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
F='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:(1|4)/|BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:(1|4)/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2 3; do for v in main prefetch; do
  b=$B/hgca_bench_transfer; [ $v = prefetch ] && b=$B/bt_prefetch
  timeout 150 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys, tarfile
R = sys.argv[1]
t = tarfile.open(f"{R}/json.tgz")
def load(n):
  try: return json.load(t.extractfile(n))["benchmarks"]
  except Exception as e: print(n, e); return []
for rep in (1, 2, 3):
  for v in ("main", "prefetch"):
    for b in load(f"d2h_{v}_{rep}.json"):
      x = f'{b["GBps_median"]:.1f}'
      if "scatter_GBps" in b: x += f' (copy {b["copy_GBps"]:.1f} / scatter {b["scatter_GBps"]:.1f})'
      print(f"d2h{rep} {v}", b["name"].split("/iter")[0].replace("BM_D2H/", ""), x)
PY
