#!/bin/bash
# FlashH2D / FlashD2H on the GPU machine: tests, benchmarks, hgca-decode before/after, memcheck.
D=.device-flash
export LD_LIBRARY_PATH=$PWD/$D/lib
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; nproc; } > $OUT/tests.log 2>&1
timeout 60 $D/bin/hgca_gpu_tests >> $OUT/tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
grep -E "FAILED|PASSED|tests ran" $OUT/tests.log | head -20
timeout 60 $D/bin/hgca_bench_transfer --benchmark_format=json --benchmark_out=$OUT/transfer.json > $OUT/bench.txt 2>&1; echo "bench rc=$?"
for i in 1 2 3; do
  timeout 20 $D/bin/hgca-decode-before --json >> $OUT/decode-before.json 2>/dev/null
  timeout 20 $D/bin/hgca-decode --json >> $OUT/decode-after.json 2>/dev/null
done
python3 $D/summary.py $OUT > $OUT/summary.txt 2>&1; cat $OUT/summary.txt
timeout ${MEMCHECK_S:-40} compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests \
  --gtest_filter='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*:CudaGraph*' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head
