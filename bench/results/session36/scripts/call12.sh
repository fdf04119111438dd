#!/bin/bash
# Session 36, call 12 (a diagnostic for the next session): FlashD2H at 1 and 2 layers, where it
# runs below 45 GB/s, with 2, 3 and 4 staging slots and 1, 10, 50 % of the evicted entries selected
# (the registered laps-1 store rows), and the pool rows (the same copies and a scatter into a pinned
# pool, no store logic); 2 rounds, bin/d1 (the library of 311cc41).
CALL=${CALL:-call12}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store/block_KB:16/slots:(2|3|4)/threads:0/selected_pct:(50|10|1)/layers:(1|2)/laps:1|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4|BM_D2H/flash_pool/block_KB:16/|BM_D2H/flash_pool_streaming/block_KB:16/|BM_D2H/flash_copy_only/block_KB:16/'
for r in 1 2; do
  timeout 150 $D/bin/d1/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0].replace("/threads:0", "").replace("block_KB:", "")
        rows.setdefault(n, []).append("%.1f(c%.0f,s%.0f)" % (b.get("GBps_median", 0), b.get("copy_GBps", 0), b.get("scatter_GBps", 0)))
for n, v in rows.items(): print(n, *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
