#!/bin/bash
# FlashD2H (branch d2h-fast): the new binary's D2H and interference benchmarks, the branch base's
# and a no-non-temporal-stores variant's flash_store in the same call, decode runs interleaved with
# the base's, the CUDA backend's end-to-end GPU tests and memcheck of FlashD2H's tests; one call with
# a deadline (each step gets at most what is left of BUDGET seconds).
D=.device-d2h-fast
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
END=$((SECONDS + ${BUDGET:-300}))
left() { local l=$((END - SECONDS)); [ $l -gt $1 ] && l=$1; [ $l -lt 1 ] && l=1; echo $l; }
timeout $(left 75) $B/hgca_bench_transfer --benchmark_filter='BM_D2H|BM_Compute' --benchmark_out=$OUT/transfer_d2h.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h bench rc=$?"
timeout $(left 20) $B/hgca_bench_transfer_base --benchmark_filter='BM_D2H/flash_store/' --benchmark_out=$OUT/transfer_d2h_base.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h base bench rc=$?"
timeout $(left 20) $B/hgca_bench_transfer_cached --benchmark_filter='BM_D2H/flash_store/' --benchmark_out=$OUT/transfer_d2h_cached.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h cached-stores bench rc=$?"
: > $OUT/decode.json; : > $OUT/decode_base.json
for i in 1 2 3; do
  timeout $(left 10) $B/hgca-decode_base --json 2>/dev/null >> $OUT/decode_base.json
  timeout $(left 10) $B/hgca-decode --json 2>/dev/null >> $OUT/decode.json
done
# The CUDA backend's end-to-end tests (the kernel sweeps do not touch FlashD2H).
timeout $(left 200) $B/hgca_gpu_tests --gtest_filter='-*AttentionSweep*:SparseAttention.*:WindowAttention.*:*MergeKernel*:FlashH2D*:*FlashH2DSpans*' > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$? (124: stopped at the deadline)"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -12
echo "gpu tests passed: $(grep -c '^\[       OK' $OUT/gpu_tests.log), last started: $(grep '^\[ RUN' $OUT/gpu_tests.log | tail -1)"
timeout $(left 90) compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*FlashRoundTrip*:*NothingLost*:CudaGraph.CapturedDecodeStepsEqualDirectCalls' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
python3 $D/table.py $OUT
