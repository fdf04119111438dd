#!/bin/bash
# One call: the candidate (decode_cluster_kernel under __maxnreg__) against main's attributes
# (HGCA_EXP_CLUSTER=lb) at G 4 and G 8 batch 16 W 16384, interleaved, 3 rounds, SDPA before and
# after; split + combine forced with and without __maxnreg__ on the split kernel (and at G 8 W 4096,
# where the planner takes it); then, if the candidate is at least as fast as SDPA at the goal shape,
# the whole sweep with the peer; the GPU tests but the sparse attention's, racecheck of one cluster test.
D=.device-gqa4
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
G='WindowDecode/batch:16/hkv:(8|4)/window:16384'
x() { local name=$1 f=$2; shift 2; env "$@" timeout 20 $B/hgca_bench_gpu_exp --benchmark_filter="$f" --benchmark_out=$R/$name.json --benchmark_out_format=json > /dev/null 2>$R/$name.err || echo "$name rc=$?"; }
timeout 40 python3 $D/sdpa_shapes.py 16:8:16384 16:4:16384 16:4:4096 > $R/sdpa_a.json 2> $R/sdpa_a.log || echo "sdpa_a failed"
for r in 1 2 3; do x cand$r "$G"; x lb$r "$G" HGCA_EXP_CLUSTER=lb; done
for r in 1 2; do
  x comb$r "$G|WindowDecode/batch:16/hkv:4/window:4096" HGCA_EXP_PATH=combine
  x combmn$r "$G|WindowDecode/batch:16/hkv:4/window:4096" HGCA_EXP_PATH=combine HGCA_EXP_SPLIT=mn
done
timeout 40 python3 $D/sdpa_shapes.py 16:8:16384 16:4:16384 16:4:4096 > $R/sdpa_b.json 2> $R/sdpa_b.log || echo "sdpa_b failed"
C="python3 $D/compare.py"
$C goal_exit sdpa=$R/sdpa_a.json,$R/sdpa_b.json cand=$R/cand1.json,$R/cand2.json,$R/cand3.json lb=$R/lb1.json,$R/lb2.json,$R/lb3.json comb=$R/comb1.json,$R/comb2.json combmn=$R/combmn1.json,$R/combmn2.json > $R/ab_table.txt
GOAL=$?; done_
S=All/WindowAttentionSweep.DecodeRaggedWrapped
timeout 60 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="WindowAttention.DecodeWithoutWorkspace" > $R/racecheck.log 2>&1 &
RC=$!
timeout 60 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"
wait $RC; echo "racecheck rc=$?"; done_
if [ $GOAL = 0 ]; then
  timeout 45 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
  timeout 50 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
  python3 $D/table.py maxnreg=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt; done_
fi
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran|largest error|PlannerTakes" $R/tests.log | head -14
grep -E "RACECHECK SUMMARY|PASSED|FAILED|tests ran" $R/racecheck.log | head -4
cat $R/ab_table.txt; [ -f $R/table.txt ] && cat $R/table.txt
