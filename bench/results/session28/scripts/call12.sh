#!/bin/bash
# Session 28, call 12: call 11 found rows lost on the CUDA backend (the sweep at allocations 6 and
# 50: a scatter whose hand-off to the pool failed was reported as memory running out, once, and its
# rows never entered the host window). With commit_window scattering in its own thread when it
# cannot hand the work over: the CUDA sweep 5 times, the runtime's CUDA tests, the host sweep.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call12; mkdir -p $R
timeout 300 $D/bin/hgca_gpu_alloc_tests --gtest_repeat=5 > $R/gpu_alloc.log 2>&1; echo "gpu_alloc x5 rc=$?"
grep -E "allocation failures|FAILED|failure at" $R/gpu_alloc.log | head -12
timeout 200 $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_filter='Cuda*:FlashH2D*:Exact*:Dtypes/*:Cases/*' > $R/gpu_runtime.log 2>&1
echo "gpu runtime tests rc=$?"; tail -2 $R/gpu_runtime.log
timeout 100 $D/bin/hgca_alloc_tests > $R/alloc.log 2>&1; echo "alloc rc=$?"; grep -E "allocation failures|PASSED|FAILED" $R/alloc.log
cd $OUT && tar czf call12.tgz call12 && rm -rf call12
