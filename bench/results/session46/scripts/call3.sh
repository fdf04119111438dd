#!/bin/bash
# Session 46, call 3 (the commit in .device/commit; one H200): the test programs the last commits touched
# (the tokenizer's heap-ordered merges, the model driver's checks, the store tests) at the final commit.
CALL=${CALL:-call3}; source bench/results/session46/scripts/common.sh
for p in hgca_tests hgca_model_tests hgca_gpu_model_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
