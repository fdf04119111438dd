#!/bin/bash
# Session 47, call 2 (the commit in .device/commit; one H200): every test program at that commit, and
# two tests on builds with the old code they were written against (…_old_*: the same test sources,
# the source file the fix changed at its state before the fix), which must fail there:
# AllocationFailures.AddSequenceSaysWhatRanOut (the ring slot add_sequence lost, src/runtime_base.cpp)
# and HostCallsTest.AWaitingCapturedCallLeavesTheCoreIdle (src/gpu/host_calls.cpp). Then memcheck over
# the GPU tests this stop touched (merge, host calls, overflow paths, the no-wait test).
CALL=${CALL:-call2}; source bench/results/session47/scripts/common.sh
for p in hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$p.log | tr '\n' ' ')"
done | tee $R/summary.txt
timeout 120 $D/bin/hgca_gpu_alloc_tests_old_ring --gtest_filter='*AddSequenceSaysWhatRanOut*' > $R/old_ring.log 2>&1
echo "old ring rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $R/old_ring.log | head -1)" | tee -a $R/summary.txt
timeout 120 $D/bin/hgca_gpu_tests_old_hostcalls --gtest_filter='*AWaitingCapturedCallLeavesTheCoreIdle*' > $R/old_hostcalls.log 2>&1
echo "old host calls rc=$? $(grep -E 'Failure|actual|^\[  (PASSED|FAILED)  \]' $R/old_hostcalls.log | head -4 | tr '\n' ' ')" | tee -a $R/summary.txt
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 $D/bin/hgca_gpu_tests \
  --gtest_filter='*MergeKernel*:*HostCalls*:*CudaOverflow*:*CudaAsync*' > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  PASSED  \]|^\[  FAILED  \]' $R/memcheck.log | tr '\n' ' ')" | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
