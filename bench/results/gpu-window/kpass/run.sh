#!/bin/bash
# One call: main's hgca_bench_gpu (08f07a3) and the candidate (K pass as K·Qᵀ) interleaved, 3 rounds,
# at batch 16, Hkv 8 and 4, W 4096 and 16384 (each binary's planned path);
# then the whole WindowDecode sweep of the final binary (the candidate if it is at least as fast as
# main at the goal shape, else main's) and the SDPA peer's sweep; last, the GPU tests of the window
# attention and the planner with the candidate.
D=.device-gqa5
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
done_() { tar czf $OUT/results.tgz -C $OUT r; }
F='WindowDecode/batch:16/hkv:(8|4)/window:(4096|16384)'
x() { timeout 15 $B/$2 --benchmark_filter="$F" --benchmark_out=$R/$1.json --benchmark_out_format=json > /dev/null 2>$R/$1.err || echo "$1 rc=$?"; }
for r in 1 2 3; do x main$r hgca_bench_gpu_main; x cand$r hgca_bench_gpu; done
python3 $D/ab.py main=$R/main1.json,$R/main2.json,$R/main3.json cand=$R/cand1.json,$R/cand2.json,$R/cand3.json > /dev/null
if [ $? = 0 ]; then FINAL=hgca_bench_gpu; else FINAL=hgca_bench_gpu_main; fi
echo "final: $FINAL" | tee $R/final.txt; done_
timeout 45 $B/$FINAL --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/ab.py sdpa=$R/sdpa.json main=$R/main1.json,$R/main2.json,$R/main3.json cand=$R/cand1.json,$R/cand2.json,$R/cand3.json > $R/ab_table.txt
python3 $D/table.py final=$R/gpu.json sdpa=$R/sdpa.json > $R/table.txt; done_
timeout 35 $B/hgca_gpu_tests --gtest_filter='*WindowAttention*:*Planner*' > $R/tests.log 2>&1; echo "gpu_tests rc=$?"; done_
grep -E "^\[  FAILED|PASSED|SKIPPED|tests ran|largest error" $R/tests.log | head -10
cat $R/ab_table.txt $R/table.txt
