#!/bin/bash
# Session 41, call 1: every test program, the programs built against the installed package (host
# and CUDA backends), the tools' --version, hgca-decode's default run 3 times.
CALL=${CALL:-call1}; source bench/results/session41/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
for c in "consumer_c" "consumer_cpp" "consumer_cpp cuda"; do $D/bin/$c > $R/"${c// /-}".log 2>&1; echo "$c rc=$?: $(tail -1 $R/"${c// /-}".log)"; done
for t in hgca-decode hgca-tune; do echo "$($D/bin/$t --version) rc=$?"; done
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for r in (1, 2, 3):
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
