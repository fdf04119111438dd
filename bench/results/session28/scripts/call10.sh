#!/bin/bash
# Session 28, call 10: heap exhaustion at every allocation of a runtime's calls, the CUDA backend
# (hgca_gpu_alloc_tests) and the host backend (hgca_alloc_tests) on the GPU machine's CPU.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call10; mkdir -p $R
timeout 400 $D/bin/hgca_gpu_alloc_tests > $R/gpu_alloc.log 2>&1; echo "gpu_alloc rc=$?"; grep -E "allocation failures|OK|FAILED|Failure|PASSED" -A3 $R/gpu_alloc.log | head -20
timeout 100 $D/bin/hgca_alloc_tests > $R/alloc.log 2>&1; echo "alloc rc=$?"; grep -E "allocation failures|PASSED|FAILED" $R/alloc.log
cd $OUT && tar czf call10.tgz call10 && rm -rf call10
