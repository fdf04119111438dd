#!/bin/bash
# The one device call: the cluster path's residency per cluster size (probe), the decode sweep of
# main's binary (base) and of this branch's (all benchmarks), the SDPA peer, then this branch's GPU
# tests and model tests, with racecheck of the cluster-path window tests (this branch's and main's
# test binary) beside them.
D=.device-gqa-b16
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa-b16 && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 10 $B/cluster_probe > $R/probe.txt 2>&1; echo "probe rc=$?"
timeout 40 $B/hgca_bench_gpu_base --benchmark_filter=WindowDecode --benchmark_out=$R/gpu_base.json --benchmark_out_format=json > $R/bench_base.log 2>&1; echo "base rc=$?"
timeout 50 $B/hgca_bench_gpu --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 70 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py base=$R/gpu_base.json new=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 95 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:$S/bf16_G1_D256:WindowAttention.DecodeWithoutWorkspace:WindowAttention.GraphCaptureDecodeAndAppend" > $R/racecheck.log 2>&1 &
RC=$!
timeout 95 compute-sanitizer --tool racecheck $B/hgca_gpu_tests_base --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:$S/bf16_G1_D256:WindowAttention.DecodeWithoutWorkspace:WindowAttention.GraphCaptureDecodeAndAppend" > $R/racecheck_base.log 2>&1 &
RB=$!
timeout 95 $B/hgca_gpu_tests > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"
wait $RC; echo "racecheck rc=$?"; wait $RB; echo "racecheck base rc=$?"; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck.log $R/racecheck_base.log | head -8
head -12 $R/probe.txt | cut -c1-200
cat $R/table.txt
