#!/bin/bash
# Final call (committed code): the sweep with the SDPA peer in the same call, all GPU tests, the
# model tests, memcheck and racecheck on the window tests.
D=.device-gqa-cluster
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa-cluster && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 45 $B/hgca_bench_gpu --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 70 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py hgca=$R/gpu.json sdpa=$R/sdpa.json | tee $R/table.txt | head -3; done_
timeout 100 $B/hgca_gpu_tests > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED|SKIPPED" $R/gpu_model.log | head -4; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 40 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D256:$S/bf16_G2_D64:$S/f16_G1_D128:WindowAttention.LongWindowDecodeManySlices:WindowAttention.GraphCaptureDecodeAndAppend" > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -4; done_
timeout 40 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:$S/bf16_G1_D256:WindowAttention.LongWindowDecodeManySlices" > $R/racecheck.log 2>&1
echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck.log | head -4; done_
cat $R/table.txt
