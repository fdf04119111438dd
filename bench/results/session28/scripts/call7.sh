#!/bin/bash
# Session 28, call 7: the last test changes (the capture test's graphs through one lambda; the
# random-steps store-limit test): the GPU runtime tests (CUDA graphs, errors, async) and the
# store-memory tests 10 times each, and the whole host suite once.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call7; mkdir -p $R
timeout 200 $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_repeat=10 --gtest_filter='CudaGraph.*:CudaErrors.*:CudaAsync.*' > $R/gpu_runtime.log 2>&1
echo "gpu runtime x10 rc=$?"; grep -cE "^\[  PASSED" $R/gpu_runtime.log; grep -E "FAILED" $R/gpu_runtime.log | head -3
timeout 100 $D/bin/hgca_tests --gtest_brief=1 --gtest_repeat=10 --gtest_filter='RuntimeStoreMemory.*:StoreOutOfMemory.*' > $R/store.log 2>&1
echo "store x10 rc=$?"; grep -cE "^\[  PASSED" $R/store.log; grep -E "FAILED" $R/store.log | head -3
timeout 100 $D/bin/hgca_tests --gtest_brief=1 > $R/host_tests.log 2>&1; echo "host_tests rc=$?"; tail -1 $R/host_tests.log
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
