#!/bin/bash
# Session 39, call 1: the library as committed on the GPU machine: every test program that runs
# away from the build tree (their data through HGCA_SHARED_DIR / HGCA_TEST_DATA_DIR), FlashD2H's and
# FlashH2D's tests under memcheck, hgca-decode's default run 3 times, and a store filled until it
# refuses (experiments/fill_store.cpp).
CALL=${CALL:-call1}; source bench/results/session39/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s"
done
F='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*:CudaStaging*'
timeout 150 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests --gtest_filter="$F" > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err || echo "decode r$r failed"; done
( /usr/bin/time -v timeout 200 $D/bin/fill_store ) > $R/fill_store.log 2>&1; echo "fill_store rc=$?"
cd $OUT && tar czf $CALL.tgz $CALL
for f in $CALL/*.log; do echo "$(basename $f): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|ERROR SUMMARY|LEAK SUMMARY' $f | tr '\n' ' ')"; done
grep -hE "^\[  FAILED  \]|SKIPPED \] [A-Z]" $CALL/*.log | sort -u | head -20
python3 - $CALL <<'PY'
import json, sys
for r in (1, 2, 3):
    try:
        j = json.loads(open(f"{sys.argv[1]}/decode-r{r}.json").read().strip().splitlines()[-1])
        print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}, {j['tokens_per_s']:.0f} tok/s, backend {j.get('backend')}")
    except Exception as e:
        print(f"decode r{r}: ? ({e})")
PY
grep -E "start|refused|MemAvailable then|Maximum resident|Elapsed|Exit status" $CALL/fill_store.log
cat $CALL/machine.txt; rm -rf $CALL
