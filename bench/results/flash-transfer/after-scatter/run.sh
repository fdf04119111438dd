#!/bin/bash
# FlashD2H after the scatter's rework (branch d2h-store) against the branch base's binaries, one call.
D=.device-d2h-store
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
timeout 100 $B/hgca_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -12
timeout 60 $B/hgca_tests > $OUT/tests.log 2>&1; echo "hgca_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/tests.log | head -8
timeout 45 $B/hgca_bench_transfer --benchmark_filter='BM_D2H' --benchmark_out=$OUT/transfer_d2h.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h bench rc=$?"
timeout 30 $B/hgca_bench_transfer_base --benchmark_filter='BM_D2H/flash_store' --benchmark_out=$OUT/transfer_d2h_base.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h base bench rc=$?"
: > $OUT/decode.json; : > $OUT/decode_base.json
for i in 1 2 3; do
  timeout 20 $B/hgca-decode_base --json 2>/dev/null >> $OUT/decode_base.json
  timeout 20 $B/hgca-decode --json 2>/dev/null >> $OUT/decode.json
done
python3 $D/table.py $OUT
