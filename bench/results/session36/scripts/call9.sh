#!/bin/bash
# Session 36, call 9 (issue 5's D2H rows on the H200 host of calls 7-8, the library as committed,
# bin/d1): FlashD2H end to end into fresh, grown and varied stores at 1-32 layers (the runtime's
# slot counts), against per-block and batch copies D2H and the copies alone; the compute-bound
# kernel alone and beside FlashD2H; 3 rounds in one process each (session 34's call 3 filter
# without its H2D rows).
CALL=${CALL:-call9}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/(flash_copy_only|memcpy_per_block|memcpy_batch)/block_KB:16/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4/threads:0/selected_pct:10/layers:(1|2)|8/threads:0/selected_pct:10/layers:(4|16|32)|9/threads:0/selected_pct:10/layers:8)/laps:4|BM_Compute/'
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 170 $D/bin/d1/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0]
        v = "%.3fms" % b["kernel_ms_median"] if n.startswith("BM_Compute") else "%.1f" % b.get("GBps_median", b.get("bytes_per_second", 0) / 1e9)
        rows.setdefault(n, []).append(v)
for n, v in rows.items(): print(n.replace("/threads:0/selected_pct:10", "").replace("block_KB:", "").replace("/laps:4", ""), *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
