#!/bin/bash
# Session 34, call 10 (main with experiments/flash-h2d-bulk.patch): FlashH2D through the TMA's bulk copies in the
# library: memcheck and racecheck over its tests and the round trips, the H2D rows with their
# peers (2 rounds), then the whole GPU suite.
CALL=${CALL:-call10}; source bench/results/session34/scripts/common.sh
F='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*'
timeout 60 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests --gtest_filter="$F" > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
timeout 60 compute-sanitizer --tool racecheck $D/bin/hgca_gpu_tests --gtest_filter="$F" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
for r in 1 2; do
  timeout 40 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_per_block|memcpy_batch|memcpy_contiguous)/' \
    --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2> $R/r$r.err || echo "round $r failed"
done
timeout 110 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
cd $OUT && tar czf $CALL.tgz $CALL
for f in memcheck racecheck gpu_tests; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|ERROR SUMMARY|RACECHECK SUMMARY' $CALL/$f.log | tr '\n' ' ')"; done
grep -h "^\[  FAILED  \]" $CALL/*.log | sort -u | head
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f)).get("benchmarks", []):
        rows.setdefault(b["name"].split("/iterations")[0], []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else b.get("error_message", "?"))
for n, v in rows.items(): print(f"{n:<42}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
