#!/bin/bash
# Session 43, call 5 (5cc029b): the method tests against fp64 (*SparseMethod*: output over S and the
# window, re-evaluation's S, the fp64 model with min_keep 0/24 and heads_per_task 1/2) on both
# backends, then the whole GPU test program once more.
CALL=${CALL:-call5}; source bench/results/session43/scripts/common.sh
for t in hgca_tests hgca_gpu_tests; do
  timeout 60 $D/bin/$t --gtest_filter='*SparseMethod*' > $R/$t-sparse.log 2>&1; echo "$t SparseMethod rc=$?: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t-sparse.log | tr '\n' ' ')"
done
t0=$(date +%s); timeout 300 $D/bin/hgca_gpu_tests > $R/hgca_gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/hgca_gpu_tests.log | tr '\n' ' ')"
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
