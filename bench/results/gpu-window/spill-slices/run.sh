#!/bin/bash
# The one device call: the decode sweep (planner's paths, then split + combine and the cluster path
# forced where the spilled cluster path serves) and the SDPA peer, then the GPU tests but the
# sparse attention's (untouched) with the model tests, racecheck of the new test and one cluster
# sweep case beside them.
D=.device-gqa-fused
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 55 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py $R/gpu.json $R/sdpa.json > $R/table.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 90 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="WindowAttention.DecodeClusterSpill*:$S/bf16_G4_D128" > $R/racecheck.log 2>&1 &
RC=$!
timeout 80 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 12 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
wait $RC; echo "racecheck rc=$?"; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED|tests ran" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
cat $R/table.txt
