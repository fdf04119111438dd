#!/bin/bash
# Session 34, call 4: FlashD2H end to end with fewer staging slots than the runtime's rule gives
# (4, 5, 6 against 8 or 9) at 8, 16 and 32 layers, fresh, grown and varied stores; the benchmark
# of main with experiments/x-slots.patch (registrations only); 6 rounds in one process each.
CALL=call4; source bench/results/session34/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3 4 5 6; do
  t0=$(date +%s)
  timeout 80 $D/bin/hgca_bench_transfer-x --benchmark_filter='BM_D2H/x_|BM_D2H/flash_copy_only/block_KB:16/slots:2/' --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0].replace("/threads:0/selected_pct:10", "").replace("block_KB:16/", "").replace("/laps:4", "")
        rows.setdefault(n, []).append(b["GBps_median"])
for n, v in rows.items(): print(f"{n:<40} median {statistics.median(v):5.1f}  ", " ".join("%.1f" % x for x in v))
PY
cat $CALL/machine.txt; rm -rf $CALL
