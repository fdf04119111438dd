#!/bin/bash
# Session 45, call 3 (the commit in .device/commit): every test program at the stop's last code
# (the engine's cap on key chunks of row-cut items), the allocation-failure programs 5 runs each.
CALL=${CALL:-call3}; source bench/results/session45/scripts/common.sh
for p in hgca_gpu_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_gpu_model_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|tests? ran' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
for t in hgca_alloc_tests:5 hgca_gpu_alloc_tests:5; do
  p=${t%%:*}; runs=${t##*:}; ok=0
  for i in $(seq 1 $runs); do
    if timeout 60 $D/dbg/$p > $R/$p-$i.log 2>&1; then ok=$((ok + 1)); rm $R/$p-$i.log; fi
  done; echo "$p: $ok of $runs runs passed"
done | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
