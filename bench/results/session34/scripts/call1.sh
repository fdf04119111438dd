#!/bin/bash
# Session 34, call 1: main as it stands, on the GPU machine: the GPU suite, the model tests, the
# allocation-failure sweep, compute-sanitizer memcheck over the staging and nothing-lost tests, the
# CPU suite on the Xeon (its ISA paths), hgca-decode's default run 3 times.
CALL=call1; source bench/results/session34/scripts/common.sh
timeout 240 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_alloc_tests > $R/gpu_alloc_tests.log 2>&1; echo "hgca_gpu_alloc_tests rc=$?"
timeout 90 $D/bin/hgca_tests > $R/cpu_tests.log 2>&1; echo "hgca_tests rc=$?"
timeout 150 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests \
  --gtest_filter='*Staging*:*NothingLost*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err || echo "decode r$r failed"; done
cd $OUT && tar czf $CALL.tgz $CALL
for f in gpu_tests model_tests gpu_alloc_tests cpu_tests memcheck; do
  echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|ERROR SUMMARY' $CALL/$f.log | tr '\n' ' ')"
done
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
cat $CALL/machine.txt; rm -rf $CALL
