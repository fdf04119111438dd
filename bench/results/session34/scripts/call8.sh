#!/bin/bash
# Session 34, call 8: FlashH2D against a gather through the TMA's bulk copies (host → shared →
# device, one thread per CTA, 6 × 16 KB in flight; experiments/tma-bulk-gather.patch, which checks
# every byte after the warm-up), the contiguous copy beside; 3 rounds in one process each.
CALL=${CALL:-call8}; source bench/results/session34/scripts/common.sh
for r in 1 2 3; do
  timeout 60 $D/bin/hgca_bench_transfer-bulk --benchmark_filter='BM_H2D/(x_bulk|flash|memcpy_contiguous)/block_KB:(16|64)/' \
    --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob, statistics
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0]
        rows.setdefault(n, []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else b.get("error_message", "?"))
for n, v in rows.items(): print(f"{n:<40}", *v)
PY
grep -h "error\|wrong" $CALL/r*.err | head -5
cat $CALL/machine.txt; rm -rf $CALL
