#!/bin/bash
# Session 43, call 4 (8bc5555): the method tests against fp64 (SparseMethod.*: output over S and the
# window, re-evaluation's S, the fp64 model of MAW tracking, eviction and selection) on both backends,
# then the whole GPU test program once more.
CALL=${CALL:-call4}; source bench/results/session43/scripts/common.sh
for t in hgca_tests hgca_gpu_tests; do
  timeout 60 $D/bin/$t --gtest_filter='SparseMethod.*' > $R/$t-sparse.log 2>&1; echo "$t SparseMethod rc=$?: $(grep -E '^\[  (PASSED|FAILED)  \]|^\[       OK \]' $R/$t-sparse.log | tr '\n' ' ')"
done
t0=$(date +%s); timeout 300 $D/bin/hgca_gpu_tests > $R/hgca_gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/hgca_gpu_tests.log | tr '\n' ' ')"
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
