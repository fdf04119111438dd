#!/bin/bash
# FlashD2H (branch d2h-fast), second call: the final binary's D2H and interference benchmarks;
# flash_store of the final and the base binary twice each, alternating (run-to-run spread); probe
# binaries (not committed code) that each leave out one part of the scatter, so that the GPU
# machine itself says what each part costs; GPU tests, memcheck, decode interleaved with the base.
D=.device-d2h-fast
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
END=$((SECONDS + ${BUDGET:-240}))
left() { local l=$((END - SECONDS)); [ $l -gt $1 ] && l=$1; [ $l -lt 1 ] && l=1; echo $l; }
timeout $(left 75) $B/hgca_bench_transfer --benchmark_filter='BM_D2H|BM_Compute' --benchmark_out=$OUT/transfer_d2h.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h bench rc=$?"
mkdir -p /tmp/fs
for run in base_1 final_1 base_2 final_2 grow4 nocache nopush nofill; do
  bin=${run%_*}; [ $bin = final ] && bin=hgca_bench_transfer || bin=hgca_bench_transfer_$bin
  timeout $(left 25) $B/$bin --benchmark_filter='BM_D2H/flash_store/' --benchmark_out=/tmp/fs/$run.json --benchmark_out_format=json > /dev/null 2>&1; echo "$run rc=$?"
done
python3 -c "
import json, glob, os
print(json.dumps({os.path.basename(f)[:-5]: {b['name']: b['GBps_median'] for b in json.load(open(f))['benchmarks']} for f in sorted(glob.glob('/tmp/fs/*.json'))}, indent=1))" > $OUT/flash_store_runs.json
: > $OUT/decode.json; : > $OUT/decode_base.json
for i in 1 2 3; do
  timeout $(left 10) $B/hgca-decode_base --json 2>/dev/null >> $OUT/decode_base.json
  timeout $(left 10) $B/hgca-decode --json 2>/dev/null >> $OUT/decode.json
done
timeout $(left 200) $B/hgca_gpu_tests --gtest_filter='-*AttentionSweep*:SparseAttention.*:WindowAttention.*:*MergeKernel*:FlashH2D*:*FlashH2DSpans*' > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$? (124: stopped at the deadline)"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -12
timeout $(left 90) compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*FlashRoundTrip*:*NothingLost*:CudaGraph.CapturedDecodeStepsEqualDirectCalls' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
python3 $D/table2.py $OUT
