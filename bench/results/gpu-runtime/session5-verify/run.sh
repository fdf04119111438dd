#!/bin/bash
# Session 5, first call: main 518db6c verified (b6579f7 never ran on the GPU), racecheck of the
# final cluster kernel, the hybrid layer re-run, hgca-decode baseline.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/machine.txt; nproc >> $R/machine.txt
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 90 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaOverflow*:CudaAsync.*:*FlashD2H*:*Flash*RoundTrip*:*NothingLost*:*Exhaust*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 100 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:WindowAttention.DecodeWithoutWorkspace" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -4
for i in 1 2 3; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
timeout 100 $B/hgca_bench_layer --benchmark_format=json --benchmark_out=$R/layer.json > $R/layer.log 2>&1; echo "layer rc=$?"
timeout 60 python3 bench/peers/torch_copy_sdpa.py > $R/torch_copy_sdpa.json 2>$R/peer.log; echo "peer rc=$?"
(cd $OUT && tar czf results.tgz r && rm -rf r)
echo done
