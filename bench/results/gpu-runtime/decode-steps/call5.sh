#!/bin/bash
# Session 5, last check of main's final code (captured jobs kept apart, fill_append fallback).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 150 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 20 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 15 $B/hgca-decode --json > $R/decode.json 2>/dev/null; echo "decode rc=$?"
(cd $OUT && tar czf results.tgz r && rm -rf r)
