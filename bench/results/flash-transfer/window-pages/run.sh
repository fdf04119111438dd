#!/bin/bash
# FlashD2H with the host window made of store blocks (branch d2h-handoff) against the binaries of
# after-scatter/ (*_base), one call with a deadline: each step gets at most what is left of it.
D=.device-d2h-handoff
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
END=$((SECONDS + ${BUDGET:-110}))
left() { local l=$((END - SECONDS)); [ $l -gt $1 ] && l=$1; [ $l -lt 1 ] && l=1; echo $l; }
timeout $(left 45) $B/hgca_bench_transfer --benchmark_filter='BM_D2H' --benchmark_out=$OUT/transfer_d2h.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h bench rc=$?"
timeout $(left 20) $B/hgca_bench_transfer_base --benchmark_filter='BM_D2H/flash_store/' --benchmark_out=$OUT/transfer_d2h_base.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h base bench rc=$?"
# The CUDA backend's end-to-end tests (the kernel sweeps do not touch the host window).
timeout $(left 40) $B/hgca_gpu_tests --gtest_filter='-*AttentionSweep*:SparseAttention.*:WindowAttention.*:*MergeKernel*:FlashH2D*:*FlashH2DSpans*' > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$? (124: stopped at the deadline)"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -12
echo "gpu tests passed: $(grep -c '^\[       OK' $OUT/gpu_tests.log), last started: $(grep '^\[ RUN' $OUT/gpu_tests.log | tail -1)"
: > $OUT/decode.json; : > $OUT/decode_base.json
for i in 1 2 3; do
  timeout $(left 8) $B/hgca-decode_base --json 2>/dev/null >> $OUT/decode_base.json
  timeout $(left 8) $B/hgca-decode --json 2>/dev/null >> $OUT/decode.json
done
python3 $D/table.py $OUT
