#!/bin/bash
# The device call: the decode sweep (this branch), the experiment build on the workspace-path
# shapes (HGCA_EXP_PATH=combine: the old finish; fused: the last block everywhere; plus
# HGCA_EXP_NODISCARD: no discard of the scores' L2 lines), the SDPA peer, the GPU tests and model
# tests with racecheck of the fused and cluster decode tests beside them, the sweep again.
D=.device-gqa-fused
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
F='WindowDecode/batch:1/hkv:[0-9]+/window:(4096|16384)|WindowDecode/batch:16/hkv:32/window:4096|WindowDecode/batch:16/hkv:4/window:4096|WindowDecode/batch:16/hkv:(8|4)/window:16384'
timeout 40 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
HGCA_EXP_PATH=combine timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$F" --benchmark_out=$R/exp_combine.json --benchmark_out_format=json > $R/exp.log 2>&1; echo "exp combine rc=$?"
HGCA_EXP_PATH=fused timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$F" --benchmark_out=$R/exp_fused.json --benchmark_out_format=json >> $R/exp.log 2>&1; echo "exp fused rc=$?"
HGCA_EXP_PATH=fused HGCA_EXP_NODISCARD=1 timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$F" --benchmark_out=$R/exp_nodiscard.json --benchmark_out_format=json >> $R/exp.log 2>&1; echo "exp nodiscard rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py hgca=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt
python3 $D/table.py combine=$R/exp_combine.json fused=$R/exp_fused.json nodiscard=$R/exp_nodiscard.json sdpa=$R/sdpa.json > $R/exp_table.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 160 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="WindowAttention.DecodeLastBlockRaggedWrappedReplayedTwice:$S/bf16_G4_D128:$S/f16_G8_D64:WindowAttention.GraphCaptureDecodeAndAppend" > $R/racecheck.log 2>&1 &
RC=$!
timeout 130 $B/hgca_gpu_tests > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
wait $RC; echo "racecheck rc=$?"; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
cat $R/exp_table.txt
cat $R/table.txt
