#!/bin/bash
# Session 34, call 3 (issue 5 on main as it stands): FlashH2D against one cudaMemcpyAsync per block
# and cudaMemcpyBatchAsync at 4, 16, 64 KB blocks (2, 4, 8 SMs); FlashD2H end to end into fresh,
# grown and varied stores at 1-32 layers (the runtime's slot counts), against per-block and batch
# copies D2H; the compute-bound kernel alone and beside FlashD2H; 3 rounds in one process each.
CALL=${CALL:-call3}; source bench/results/session34/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_H2D/(flash|memcpy_per_block|memcpy_batch|memcpy_contiguous)/|BM_D2H/(flash_copy_only|memcpy_per_block|memcpy_batch)/block_KB:16/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4/threads:0/selected_pct:10/layers:(1|2)|8/threads:0/selected_pct:10/layers:(4|16|32)|9/threads:0/selected_pct:10/layers:8)/laps:4|BM_Compute/'
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 170 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
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
