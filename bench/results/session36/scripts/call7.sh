#!/bin/bash
# Session 36, call 7: the library as committed (bin/d1: FlashH2D launches a call of at most 64
# spans with a 1.5 KB parameter block) against main before it (bin/d0), the same benchmark source.
# d1's FlashH2D tests and round trips, plain and under memcheck; then 3 rounds of every H2D row
# (4, 16, 64 KB; GPU idle at the call, and "_queued" behind compute) and BM_H2DHost, d0 and d1
# alternating, 80 GiB of guest memory touched first.
CALL=${CALL:-call7}; source bench/results/session36/scripts/common.sh
F='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*'
timeout 60 $D/bin/d1/hgca_gpu_tests --gtest_filter="$F" > $R/d1-tests.log 2>&1; echo "d1 tests rc=$?"
timeout 90 compute-sanitizer --tool memcheck --leak-check full $D/bin/d1/hgca_gpu_tests --gtest_filter="$F" > $R/d1-memcheck.log 2>&1; echo "d1 memcheck rc=$?"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in d0 d1; do
    t0=$(date +%s)
    timeout 120 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|flash_queued|memcpy_per_block|memcpy_batch|memcpy_batch_queued|memcpy_contiguous|memcpy_contiguous_queued)/|BM_H2DHost' \
      --benchmark_format=json --benchmark_out=$R/$v-r$r.json > /dev/null 2> $R/$v-r$r.err || echo "$v round $r failed"
    echo "$v round $r $(( $(date +%s) - t0 )) s"
  done
done
cd $OUT && tar czf $CALL.tgz $CALL
for f in $CALL/*tests.log $CALL/*memcheck.log; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|ERROR SUMMARY|LEAK SUMMARY' $f | tr '\n' ' ')"; done
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    v = f.split("/")[-1].rsplit("-r", 1)[0]
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0].replace("block_KB:", "")
        rows.setdefault((n, v), []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else "%.1fus" % b["host_us_median"] if "host_us_median" in b else b.get("error_message", "?"))
for (n, v), x in sorted(rows.items()): print(f"{n:<44} {v}", *x)
PY
cat $CALL/machine.txt; rm -rf $CALL
