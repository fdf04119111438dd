#!/bin/bash
# Call 2 (final code, commit of the planner change): the sweep with the SDPA peer, split + combine
# forced at batch 16 from the experiment build (main's combine code) in the same call, the GPU tests
# but the sparse attention's, the model tests, racecheck of the cluster tests beside them, then the
# sweep and the peer once more.
D=.device-gqa3
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa3 && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 45 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
HGCA_EXP_PATH=combine timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter='WindowDecode/batch:16/' --benchmark_out=$R/exp_combine.json --benchmark_out_format=json > $R/exp_combine.log 2>&1; echo "exp combine rc=$?"
python3 $D/table.py planner=$R/gpu.json combine=$R/exp_combine.json sdpa=$R/sdpa.json > $R/table.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 100 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="WindowAttention.DecodeWithoutWorkspace:WindowAttention.GraphCaptureDecodeAndAppend:$S/bf16_G4_D128:$S/f16_G8_D128" > $R/racecheck.log 2>&1 &
RC=$!
timeout 100 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
wait $RC; echo "racecheck rc=$?"; done_
timeout 45 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu2.json --benchmark_out_format=json > $R/bench2.log 2>&1; echo "bench2 rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa2.json 2> $R/sdpa2.log; echo "sdpa2 rc=$?"
python3 $D/table.py planner=$R/gpu2.json sdpa=$R/sdpa2.json > $R/table2.txt; done_
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran|largest error|PlannerTakes" $R/tests.log | head -14
grep -E "FAILED|PASSED|SKIPPED|tests ran" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
paste -d'#' $R/table.txt $R/table2.txt
