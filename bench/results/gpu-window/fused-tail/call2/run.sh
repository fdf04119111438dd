#!/bin/bash
# The final device call: the experiment build with the old finish forced (HGCA_EXP_PATH=combine)
# at G 4 batch 16 W 16384, the decode sweep (this commit), the SDPA peer, then the GPU tests but
# the sparse attention's (untouched, 55 s; the device time was short) and the model tests, with
# racecheck of the fused and cluster decode tests beside them.
D=.device-gqa-fused
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa-fused && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
F='WindowDecode/batch:16/hkv:8/window:16384'
HGCA_EXP_PATH=combine timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$F" --benchmark_out=$R/exp_combine.json --benchmark_out_format=json > $R/exp.log 2>&1; echo "exp combine rc=$?"
timeout 40 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py hgca=$R/gpu.json combine=$R/exp_combine.json sdpa=$R/sdpa.json > $R/table.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 90 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="WindowAttention.DecodeLastBlockRaggedWrappedReplayedTwice:$S/bf16_G4_D128:$S/f16_G8_D64" > $R/racecheck.log 2>&1 &
RC=$!
timeout 90 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
wait $RC; echo "racecheck rc=$?"; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED|tests ran" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
cat $R/table.txt
