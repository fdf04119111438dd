#!/bin/bash
# Session 47, call 3 (the commit in .device/commit; one H200): every test program at the stop's last
# code, and AllocationFailures.AddSequenceSaysWhatRanOut on a build with src/runtime_base.cpp before
# its fix (80eedd1~1) and the CUDA backend's new check that a ring list is not empty (69775c4): the
# lost ring, undefined behaviour in call 2's old build (which passed), now fails there.
CALL=${CALL:-call3}; source bench/results/session47/scripts/common.sh
for p in hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
timeout 120 $D/bin/hgca_gpu_alloc_tests_old_ring --gtest_filter='*AddSequenceSaysWhatRanOut*' > $R/old_ring.log 2>&1
echo "old ring rc=$? $(grep -E 'Failure|no free window ring|^\[  (PASSED|FAILED)  \]' $R/old_ring.log | head -4 | tr '\n' ' ')" | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
