#!/bin/bash
# Call 1: the sweep (commit with the heads-outer loop in cluster_finish, planner unchanged) with the
# SDPA peer; the experiment build (experiment_switch.patch) at batch 16 with each path forced and
# each combine variant; the GPU tests but the sparse attention's, the model tests, the window tests
# with fp16 weights, racecheck of the cluster tests beside them.
D=.device-gqa3
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
mkdir -p /work/wt-gqa3 && ln -sfn $PWD/$D/shared /work/shared
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
timeout 45 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"; done_
F='WindowDecode/batch:16/'
x() { local name=$1; shift; env "$@" timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$F" --benchmark_out=$R/exp_$name.json --benchmark_out_format=json > /dev/null 2>$R/exp_$name.err; echo "exp $name rc=$?"; }
x combine HGCA_EXP_PATH=combine
x cluster HGCA_EXP_PATH=cluster
x clusterkey HGCA_EXP_PATH=cluster HGCA_EXP_OBS=key
x skip HGCA_EXP_PATH=combine HGCA_EXP_COMBINE=skip
x f16w HGCA_EXP_PATH=combine HGCA_EXP_COMBINE=f16w
x unrollg HGCA_EXP_PATH=combine HGCA_EXP_COMBINE=unrollg
x lb6 HGCA_EXP_PATH=combine HGCA_EXP_COMBINE=lb6
x lb8 HGCA_EXP_PATH=combine HGCA_EXP_COMBINE=lb8
F='WindowDecode/batch:16/hkv:(8|4)/window:16384'
x cluster8 HGCA_EXP_PATH=cluster HGCA_EXP_NSPLIT=8
x cluster16 HGCA_EXP_PATH=cluster HGCA_EXP_NSPLIT=16
x combine11 HGCA_EXP_PATH=combine HGCA_EXP_NSPLIT=11
x combine2 HGCA_EXP_PATH=combine
x cluster2 HGCA_EXP_PATH=cluster
python3 $D/table.py planner=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt
python3 $D/table.py combine=$R/exp_combine.json cluster=$R/exp_cluster.json clusterkey=$R/exp_clusterkey.json skip=$R/exp_skip.json f16w=$R/exp_f16w.json unrollg=$R/exp_unrollg.json lb6=$R/exp_lb6.json lb8=$R/exp_lb8.json sdpa=$R/sdpa.json > $R/exp_table.txt
python3 $D/table.py combine2=$R/exp_combine2.json cluster2=$R/exp_cluster2.json cluster8=$R/exp_cluster8.json cluster16=$R/exp_cluster16.json combine11=$R/exp_combine11.json sdpa=$R/sdpa.json > $R/exp_table2.txt; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 100 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$S/bf16_G4_D128:$S/f16_G8_D64:WindowAttention.DecodeWithoutWorkspace" > $R/racecheck.log 2>&1 &
RC=$!
W='WindowAttention.*:All/WindowAttentionSweep.Decode*'
(timeout 90 $B/hgca_gpu_tests_exp --gtest_filter="$W" > $R/tests_ref.log 2>&1; echo "tests_ref rc=$?"
 HGCA_EXP_COMBINE=f16w timeout 90 $B/hgca_gpu_tests_exp --gtest_filter="$W" > $R/tests_f16w.log 2>&1; echo "tests_f16w rc=$?") &
XT=$!
timeout 100 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 15 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; done_
wait $XT; wait $RC; echo "racecheck rc=$?"; done_
grep -E "^\[  FAILED|PASSED|tests ran|largest error" $R/tests.log | head -12
grep -E "FAILED|PASSED|SKIPPED|tests ran" $R/gpu_model.log | head -4
for f in ref f16w; do echo "== $f"; grep -E "^\[  FAILED|PASSED|largest error" $R/tests_$f.log | head -8; done
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
cat $R/exp_table.txt $R/exp_table2.txt $R/table.txt
