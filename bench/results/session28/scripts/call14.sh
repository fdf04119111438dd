#!/bin/bash
# Session 28, call 14: after the review's refactor (one deferred-error mechanism in RuntimeBase,
# behaviour unchanged): the whole GPU suite, the GPU model tests, memcheck of the CUDA runtime
# tests, and the CUDA allocation sweep twice.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call14; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
timeout 150 $D/bin/hgca_gpu_alloc_tests --gtest_repeat=2 > $R/gpu_alloc.log 2>&1; echo "gpu_alloc x2 rc=$?"
grep -E "allocation failures|FAILED|failure at" $R/gpu_alloc.log | head -6
cd $OUT && tar czf call14.tgz call14 && rm -rf call14
