#!/bin/bash
# Final verification of main with the overflow policy merged.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin
timeout 150 $B/hgca_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -20
timeout 40 $B/hgca_gpu_model_tests > $OUT/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $OUT/gpu_model.log | head -5
timeout 70 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*Overflow*:CudaGraph*' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
timeout 40 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter='*OverflowAlways*Fp64*:All/SparseAttentionSweep.*/bf16_G4_D128' > $OUT/racecheck.log 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck.log | head -5
for i in 1 2; do for m in off auto always; do timeout 20 $B/hgca-decode --overflow $m --json 2>/dev/null; done; done > $OUT/decode.json
timeout 100 $B/hgca_bench_layer --benchmark_format=json --benchmark_out=$OUT/layer.json > /dev/null 2>&1; echo "layer rc=$?"
timeout 60 python3 bench/peers/torch_copy_sdpa.py > $OUT/torch_copy_sdpa.json 2>/dev/null; echo "peer rc=$?"
python3 $D/table2.py
