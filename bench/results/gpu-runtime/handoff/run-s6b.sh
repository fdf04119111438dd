#!/bin/bash
# Session 6, call 2: HostCalls tests fixed (few slots); the whole GPU suite, model tests, memcheck.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 60 $B/hgca_gpu_tests --gtest_filter='*HostCalls*:CudaHandoff*' > $R/gpu_first.log 2>&1; echo "first rc=$?"
grep -E "^\[  FAILED|^\[       OK|PASSED|tests ran" $R/gpu_first.log | head -12
timeout 330 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 120 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*HostCalls*:CudaHandoff*:CudaGraph.*:CudaAsync.*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
(cd $OUT && tar czf results.tgz r && rm -rf r)
echo done
