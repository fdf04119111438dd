#!/bin/bash
# Session 10, call 3: FlashD2H into the stores with the rows streamed into their blocks (final: SSE2
# non-temporal stores, as committed; nt512: AVX-512 ones, an experiment) against bd47dd2 (base),
# alternated twice, with the peers in the same runs.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
S='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:(1|10)/|BM_Scatter/pool_dram/block_KB:16/threads:16/'
T16='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:(10|50)/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/'
TALL='BM_D2H/flash_store/block_KB:(4|64)/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/memcpy_batch/block_KB:(4|16|64)/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2; do for v in base final nt512; do
  timeout 60 $B/hgca_bench_store_$v --benchmark_filter="$S" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
  f=$T16; [ $v = final ] && f="$T16|$TALL"
  timeout 150 $B/hgca_bench_transfer_$v --benchmark_filter="$f" --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys, collections
R = sys.argv[1]
rows = collections.defaultdict(dict)
for rep in (1, 2):
  for v in ("base", "final", "nt512"):
    try:
      for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": rows[b["run_name"].replace("/real_time", "")][f"{v}{rep}"] = f'{b["bytes_per_second"] / 1e9:.1f}'
      for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "")
        rows[n][f"{v}{rep}"] = f'{b["GBps_median"]:.1f}' + (f' ({b["scatter_GBps"]:.1f})' if "scatter_GBps" in b else "")
    except Exception as e: print(v, rep, e)
cols = [f"{v}{r}" for r in (1, 2) for v in ("base", "final", "nt512")]
print("benchmark".ljust(72), *[c.rjust(12) for c in cols])
for n, d in rows.items(): print(n.ljust(72), *[d.get(c, "-").rjust(12) for c in cols])
PY
mkdir -p $R/json; mv $R/*.json $R/json/ 2>/dev/null; cd $R && tar czf json.tgz json && rm -rf json
cat $R/summary.txt
