#!/bin/bash
# Session 29, call 7: after the review's follow-ups (a565866: the merge kernel seeds its max with the
# first side's LSE): the merge tests, the CUDA runtime tests and the graph/handoff tests, and memcheck
# of the merge tests.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call7; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt
timeout 120 $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_filter='*MergeKernel*:Cuda*' > $R/gpu_tests.log 2>&1
echo "gpu_tests rc=$?"; tail -2 $R/gpu_tests.log; grep -E "^\[  FAILED" $R/gpu_tests.log | head -5
timeout 100 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='*MergeKernel*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
