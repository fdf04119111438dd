#!/bin/bash
# Session 9, call 10: the GPU and model tests at the final library.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 360 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
grep -c "^\[       OK \]" $R/gpu_tests.log; tail -3 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
