#!/bin/bash
# Session 33, call 8 (af9f4ed): compute-sanitizer memcheck over the tests of the shared staging
# slots and of nothing lost; the allocation-failure sweep on the GPU, final library.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call8; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
timeout 300 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests \
  --gtest_filter='*Staging*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -5
timeout 120 $D/bin/hgca_gpu_alloc_tests > $R/gpu_alloc_tests.log 2>&1; echo "hgca_gpu_alloc_tests rc=$?"; grep -E "PASSED|FAILED" $R/gpu_alloc_tests.log
cat $R/machine.txt
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
