#!/bin/bash
# Session 48, call 1 (the commit in .device/commit; one H200): every test program at the commit where
# stop 47 ended (its commits after af221b1 had not run on the GPU machine), then memcheck over the GPU
# tests those commits touched (merge kernel, overflow, exact fp32 shapes), then hgca-decode's default.
CALL=${CALL:-call1}; source bench/results/session48/scripts/common.sh
for p in hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_decode_tests; do
  s=$(date +%s); timeout 300 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(( $(date +%s) - s ))s $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $D/bin/hgca_gpu_tests \
  --gtest_filter='*MergeKernel*:*CudaOverflow*:*ExactFp32*' > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED  \]|^\[  FAILED  \]' $R/memcheck.log | tr '\n' ' ')" | tee -a $R/summary.txt
HGCA_CONFIG= timeout 30 $D/bin/hgca-decode --json > $R/default.json 2> $R/default.err; echo "default rc=$?" | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
