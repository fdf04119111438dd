#!/bin/bash
# Session 18, final call for issue 3, on main 9134fb1 (src as 988d225): the whole GPU suite, the
# model tests, memcheck of the tail-launch and graph tests, the hybrid layer and the merge
# (hgca_bench_layer) with the copy + SDPA peer in the same call, hgca-decode's default run.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv > $R/machine.txt; nproc >> $R/machine.txt
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]|tests ran" $R/gpu_tests.log | head -8
timeout 60 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -3
timeout 200 compute-sanitizer --tool memcheck $B/hgca_gpu_tests \
  --gtest_filter='WindowAttention.ClusterTailLaunchDecode:CudaGraph*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
timeout 240 $B/hgca_bench_layer --benchmark_format=json --benchmark_out=$R/layer.json > $R/layer.log 2>&1; echo "layer rc=$?"
timeout 240 python3 bench/peers/torch_copy_sdpa.py > $R/copy_sdpa.json 2> $R/copy_sdpa.log; echo "copy_sdpa rc=$?"
for i in 1 2 3; do timeout 30 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
python3 bench/results/gpu-runtime/session18-final/summary.py $R | tee $R/summary.txt
tar -C $R -czf $OUT/results.tgz .
