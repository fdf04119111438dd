#!/bin/bash
# Session 35, call 1: FlashH2D through the TMA's bulk copies, two library versions against main.
# bin/main: main, plus the benchmark-only gather of session 34 (BM_H2D/x_bulk, its
# experiments/tma-bulk-gather.patch); bin/v2: main with session 34's experiments/flash-h2d-bulk-v2.patch
# (spans walked by a cursor over the kernel parameters); bin/v3: v2 with the launch's spans copied
# into shared memory first (experiments/flash-h2d-bulk-v3.patch). Correctness of v2 and v3 (the
# FlashH2D tests and round trips, plain and under memcheck), then 3 rounds of the 16 KB rows, the
# three binaries alternating, 80 GiB of guest memory touched first.
CALL=${CALL:-call1}; source bench/results/session36/scripts/common.sh
F='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*'
for v in v2 v3; do
  timeout 30 $D/bin/$v/hgca_gpu_tests --gtest_filter="$F" > $R/$v-tests.log 2>&1; echo "$v tests rc=$?"
  timeout 60 compute-sanitizer --tool memcheck $D/bin/$v/hgca_gpu_tests --gtest_filter="$F" > $R/$v-memcheck.log 2>&1; echo "$v memcheck rc=$?"
done
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in main v2 v3; do
    timeout 40 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(x_bulk|flash|memcpy_contiguous|memcpy_batch)/block_KB:16/' \
      --benchmark_format=json --benchmark_out=$R/$v-r$r.json > /dev/null 2> $R/$v-r$r.err || echo "$v round $r failed"
  done
done
cd $OUT && tar czf $CALL.tgz $CALL
for f in $CALL/*tests.log $CALL/*memcheck.log; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|ERROR SUMMARY' $f | tr '\n' ' ')"; done
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    v = f.split("/")[-1].split("-r")[0]
    for b in json.load(open(f)).get("benchmarks", []):
        n = v + " " + b["name"].split("/iterations")[0]
        rows.setdefault(n, []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else b.get("error_message", "?"))
for n, v in sorted(rows.items()): print(f"{n:<44}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
