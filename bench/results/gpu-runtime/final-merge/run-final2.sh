#!/bin/bash
# Final verification of main after reverting the deterministic registration wait and settling the
# graph test's runtimes between steps.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin
R=$OUT/r; mkdir -p $R
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 40 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 60 $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaOverflow.*' --gtest_repeat=5 > $R/graph_repeat.log 2>&1; echo "graph+overflow x5 rc=$?"; grep -cE "^\[       OK" $R/graph_repeat.log; grep -E "^\[  FAILED" $R/graph_repeat.log | sort | uniq -c | head
timeout 120 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaOverflow.*:CudaAsync.*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -5
for i in 1 2 3; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
(cd $OUT && tar czf results.tgz r && rm -rf r)
python3 $D/table-final.py $OUT/results.tgz
