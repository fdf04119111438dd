#!/bin/bash
# Call 2: BM_H2D before/after in one run, hgca-decode with per-call host-function timestamps, memcheck of FlashH2D.
D=.device-h2d-latency
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
timeout 60 $B/hgca_bench_transfer-before --benchmark_filter='BM_H2D' --benchmark_format=json --benchmark_out=$OUT/transfer_h2d_before.json > /dev/null 2>&1; echo "before rc=$?"
timeout 60 $B/hgca_bench_transfer --benchmark_filter='BM_H2D' --benchmark_format=json --benchmark_out=$OUT/transfer_h2d.json > /dev/null 2>&1; echo "after rc=$?"
for i in 1 2; do
  HGCA_TRACE_FILE=$OUT/trace$i.txt timeout 30 $B/hgca-decode-trace --decode-steps 256 --json 2>/dev/null
done > $OUT/decode_trace.jsonl
timeout 60 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*:CudaGraph.Fresh*' > $OUT/memcheck_flash.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck_flash.log | head -5
for i in 1 2 3 4 5; do for t in CudaGraph.FreshRuntimesFirstCallsCapturedEqualDirectCalls CudaGraph.FreshRuntimesFirstCallsCapturedEqualDirectCallsWithEveryContextSetOnTheGpu; do timeout 30 $B/hgca_gpu_tests --gtest_filter=$t 2>&1 | grep -E "^\[       OK|^\[  FAILED|Failure|CUDA:" | head -3; done; done > $OUT/capture_repeat.log; sort $OUT/capture_repeat.log | uniq -c
python3 $D/h2d_table.py $OUT/transfer_h2d_before.json $OUT/transfer_h2d.json
python3 $D/trace_summary.py $OUT/decode_trace.jsonl $OUT/trace1.txt $OUT/trace2.txt
