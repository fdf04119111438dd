#!/bin/bash
# Session 46, call 2 (the commit in .device/commit; one H200): hgca-decode's embedded default (synthetic
# workload, CUDA backend) with this stop's runtime (per-device kernel setup, aligned slab) and with
# 27562d0's (hgca-decode_before), interleaved, 3 runs each: time between tokens and the share of it on
# transfers; then every test program at the commit.
CALL=${CALL:-call2}; source bench/results/session46/scripts/common.sh
for i in 1 2 3; do
  for v in before after; do
    b=$D/bin/hgca-decode; [ $v = before ] && b=$D/bin/hgca-decode_before
    timeout 120 $b --json > $R/decode-$v-$i.json 2> $R/decode-$v-$i.err || echo "decode $v $i rc=$?"
  done
done
python3 - $R <<'PY' | tee $R/decode-table.txt
import json, sys, glob
d = sys.argv[1]
print(f"{'run':10s} {'backend':8s} {'tbt p50 ms':>10s} {'tbt p99 ms':>10s} {'tokens/s':>9s} {'transfer share':>14s}")
for f in sorted(glob.glob(f"{d}/decode-*.json")):
    j = json.load(open(f))
    name = f.split('decode-')[1][:-5]
    print(f"{name:10s} {j['backend']:8s} {j['tbt_ms_p50']:10.3f} {j['tbt_ms_p99']:10.3f} {j['tokens_per_s']:9.1f} {j['transfer_share']:14.4f}")
PY
for p in hgca_gpu_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_gpu_model_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
