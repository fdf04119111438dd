#!/bin/bash
# Final call (commit 4b54dce): the sweep with the SDPA peer in the same call, an uncommitted
# experiment build on the split + combine shapes (HGCA_EXP_COMBINE: the committed combine, a
# faster one, none), all GPU tests, the model tests, racecheck of the cluster-path window tests,
# then the sweep and the peer once more.
D=.device-gqa-b16
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa-b16 && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 40 $B/hgca_bench_gpu --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 40 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
for m in default fast skip; do
  HGCA_EXP_COMBINE=$m timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter='WindowDecode/batch:(1|16)/hkv:(8|4)/' --benchmark_out=$R/exp_$m.json --benchmark_out_format=json > /dev/null 2>&1; echo "exp $m rc=$?"
done
python3 $D/table.py hgca=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt
python3 $D/table.py default=$R/exp_default.json fast=$R/exp_fast.json skip=$R/exp_skip.json sdpa=$R/sdpa.json > $R/exp_table.txt; done_
timeout 150 $B/hgca_gpu_tests > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 60 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:$S/bf16_G1_D256:WindowAttention.DecodeWithoutWorkspace:WindowAttention.GraphCaptureDecodeAndAppend" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; done_
timeout 40 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu2.json --benchmark_out_format=json > $R/bench2.log 2>&1; echo "bench2 rc=$?"
timeout 40 python3 $D/torch_sdpa_window.py > $R/sdpa2.json 2> $R/sdpa2.log; echo "sdpa2 rc=$?"
python3 $D/table.py hgca=$R/gpu2.json sdpa=$R/sdpa2.json > $R/table2.txt; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED" $R/gpu_model.log | head -4
grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck.log | head -4
cat $R/exp_table.txt
paste -d'#' $R/table.txt $R/table2.txt | cut -c1-160
