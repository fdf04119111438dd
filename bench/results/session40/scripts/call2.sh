#!/bin/bash
# Session 40, call 2: the stop's last state on the GPU machine — every test program (the C ABI's,
# MachineMemory's and the tools' changes included), hgca-decode's default run 3 times, and
# hgca-tune --quick with --out over an existing file and --svg.
CALL=call2; source bench/results/session40/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
echo '{"threads": 3}' > $R/tuned.json
timeout 120 $D/bin/hgca-tune --quick --out $R/tuned.json --svg $R/tune.svg > $R/tune.txt 2> $R/tune.err; echo "hgca-tune rc=$?"
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
python3 - $R <<'PY'
import json, sys
for r in (1, 2, 3):
    j = json.loads(open(f"{sys.argv[1]}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}, {j['tokens_per_s']:.0f} tok/s, backend {j.get('backend')}")
print("tuned.json:", json.load(open(f"{sys.argv[1]}/tuned.json")).get("threads"), "threads")
PY
grep -E "^best|^ +1 |written|plot" $R/tune.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
