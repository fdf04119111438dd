#!/bin/bash
# Session 27, call 8: memcheck of the GPU suite's runtime-level tests on main as it stands
# (2e12fa8's test binary): the CUDA runtime (graphs, hand-offs, errors, async, NUMA, overflow),
# FlashH2D and its round trips, store memory read by kernels, the host-call slots, and the
# exactness suites; the kernel sweeps are left out for time. API errors are not reported (one test
# provokes them on purpose).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call8; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
F='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*:Lists/FlashH2DSpans*:Cases/*:Shapes/CudaOverflowAlways*:Exact*:Dtypes/*:Shapes/ExactFp32*'
t0=$(date +%s)
timeout 270 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter="$F" > $R/memcheck.log 2>&1
echo "memcheck rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -6
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
