#!/bin/bash
# Session 46, call 1 (the commit in .device/commit; nvidia-h200-x2: two GPUs, for the second-device test):
# the two new CUDA tests on a build of that commit with the window code of 27562d0 (hgca_gpu_tests_nofix:
# layer slabs off 16 bytes, kernel setup once per process) and with the fixes, under compute-sanitizer
# memcheck too; every test program; the allocation-failure programs (5 runs each).
CALL=${CALL:-call1}; source bench/results/session46/scripts/common.sh
NEW='Exact.WindowSlabsOfAnySizeAreExact:CudaDevices.*'
timeout 120 $D/bin/hgca_gpu_tests_nofix --gtest_filter="$NEW" > $R/nofix.log 2>&1
echo "nofix rc=$? $(grep -E '^\[  (PASSED|FAILED|  OK|SKIPPED) ' $R/nofix.log | tr '\n' ' ')" | tee $R/summary.txt
timeout 200 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests --gtest_filter="$NEW" > $R/memcheck.log 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $R/memcheck.log | tr '\n' ' ')" | tee -a $R/summary.txt
for p in hgca_gpu_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_gpu_model_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|tests? ran' $R/$p.log | tr '\n' ' ')"
done | tee -a $R/summary.txt
grep -E '^\[       OK \] (CudaDevices|Exact.WindowSlabs)' $R/hgca_gpu_tests.log | tee -a $R/summary.txt
for t in hgca_alloc_tests:5 hgca_gpu_alloc_tests:5; do
  p=${t%%:*}; runs=${t##*:}; ok=0
  for i in $(seq 1 $runs); do
    if timeout 60 $D/dbg/$p > $R/$p-$i.log 2>&1; then ok=$((ok + 1)); rm $R/$p-$i.log; fi
  done; echo "$p: $ok of $runs runs passed"
done | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
