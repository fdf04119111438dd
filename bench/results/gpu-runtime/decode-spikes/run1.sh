#!/bin/bash
# Call 1: FlashH2D variants, hgca-decode spike diagnosis, the fresh-runtime capture tests.
D=.device-h2d-latency
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
nproc; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
timeout 60 $B/h2d_exp > $OUT/h2d_exp.txt 2>&1; echo "exp rc=$?"
run() {  # label, binary, env/args...
  local label=$1; shift
  echo "{\"label\":\"$label\",\"run\":$(timeout 30 "$@" --json 2>/dev/null)}"
}
for i in 1 2 3; do
  run base $B/hgca-decode-base
  run base_eager env CUDA_MODULE_LOADING=EAGER $B/hgca-decode-base
  run new $B/hgca-decode
  run new_t14 $B/hgca-decode --threads 14
  run new_t8 $B/hgca-decode --threads 8
done > $OUT/decode1.jsonl
run base_512 $B/hgca-decode-base --decode-steps 512 >> $OUT/decode1.jsonl
run new_512 $B/hgca-decode --decode-steps 512 >> $OUT/decode1.jsonl
run new_t8_512 $B/hgca-decode --threads 8 --decode-steps 512 >> $OUT/decode1.jsonl
for t in CudaGraph.FreshRuntimesFirstCallsCapturedEqualDirectCalls CudaGraph.FreshRuntimesFirstCallsCapturedEqualDirectCallsWithEveryContextSetOnTheGpu; do
  timeout 60 $B/hgca_gpu_tests --gtest_filter=$t 2>&1 | grep -E "OK|FAILED|Failure|error|PASSED" | head -8
done > $OUT/capture_tests.log
timeout 60 $B/hgca_gpu_tests --gtest_filter='CudaGraph*:FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*' > $OUT/tests_subset.log 2>&1; echo "subset rc=$?"
cat $OUT/capture_tests.log; grep -E "tests ran|PASSED|FAILED" $OUT/tests_subset.log | head
python3 $D/summary1.py $OUT/decode1.jsonl
cat $OUT/h2d_exp.txt
