#!/bin/bash
# Session 43, call 1: every test program (this stop: file flags refuse "-", a configuration tuned on
# another machine loads with a warning), the installed-package consumers on both backends,
# hgca-decode's default run 3 times, the warning on this machine (a file tuned on the dev machine
# warns; one hgca-tune writes here does not), and hgca-tune --quick's table and plot.
CALL=${CALL:-call1}; source bench/results/session43/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
for c in "consumer_c" "consumer_cpp" "consumer_cpp cuda"; do $D/bin/$c > $R/"${c// /-}".log 2>&1; echo "$c rc=$?: $(tail -1 $R/"${c// /-}".log)"; done
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
timeout 120 $D/bin/hgca-tune --quick --out $R/tuned.json --svg $R/bandwidth.svg > $R/tune-table.txt 2> $R/tune-table.err; echo "tune table rc=$?"
for f in $R/tuned.json bench/results/session43/dev-tuned.json; do
  HGCA_CONFIG=$f timeout 40 $D/bin/hgca-decode --json > $R/decode-$(basename $f) 2> $R/decode-$(basename $f .json).err
  echo "HGCA_CONFIG=$(basename $f) rc=$?: $(grep -c 'tuned on another machine' $R/decode-$(basename $f .json).err) warning(s): $(grep 'tuned on' $R/decode-$(basename $f .json).err)"
done
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for r in (1, 2, 3):
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: {j['backend']} p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}, cpu {j['cpu']['isa']} threads {j['cpu']['threads_per_node']}")
PY
tail -4 $R/tune-table.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
