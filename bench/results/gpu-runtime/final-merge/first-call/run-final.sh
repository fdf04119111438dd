#!/bin/bash
# Final verification of main: the whole GPU suite, the model tests, the determinism fix repeated,
# memcheck on the paths the merges touched, hgca-decode's default, the CPU peer's JSON.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin
R=$OUT/r; mkdir -p $R
timeout 260 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 40 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 40 $B/hgca_gpu_tests --gtest_filter='CudaGraph.*' --gtest_repeat=5 > $R/graph_repeat.log 2>&1; echo "graph x5 rc=$?"; grep -cE "^\[       OK" $R/graph_repeat.log; grep -E "^\[  FAILED" $R/graph_repeat.log | sort | uniq -c | head
timeout 90 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaAsync.*:Cases/FlashRoundTrip*:WindowAttention.OddGroups*:WindowAttention.DecodeWithoutWorkspace*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -5
for i in 1 2 3; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
HGCA_BENCH_WS_MB=4096 timeout 80 python3 bench/peers/torch_cpu_sdpa.py > $R/torch_cpu_sdpa.json 2> $R/torch_cpu_sdpa.err; echo "torch cpu rc=$?"
(cd $OUT && tar czf results.tgz r && rm -rf r)
python3 $D/table-final.py $OUT/results.tgz
