#!/bin/bash
# Session 27, call 2: the enqueue hardening (an error pending on the thread reported before
# anything is enqueued; a call failing partway keeps its job and stops the runtime; rows that could
# not enter a host window stop it) on the GPU machine: the whole GPU suite, the model tests,
# CudaErrors.* five times over, and memcheck of CudaErrors.* and CudaGraph.*.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 90 $D/bin/hgca_gpu_tests --gtest_filter='CudaErrors.*' --gtest_repeat=5 --gtest_brief=1 > $R/repeat.log 2>&1
echo "repeat rc=$?"; grep -c "PASSED" $R/repeat.log; grep FAILED $R/repeat.log | head -3
timeout 150 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests \
  --gtest_filter='CudaErrors.*:CudaGraph.*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -4
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
