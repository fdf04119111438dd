#!/bin/bash
# Session 43, call 3: issue 5's whole benchmark set in one run, on one host: FlashH2D at 4, 16 and
# 64 KB blocks on 2-8 SMs against one cudaMemcpyAsync per block and cudaMemcpyBatchAsync; FlashD2H
# into the store (steady stores, 1-32 layers) against per-block and batch D2H copies; a compute-bound
# kernel alone and beside FlashD2H; then the H2D 16 KB rows twice more (the batch copy's spread), and
# compute-sanitizer memcheck over the FlashH2D/FlashD2H round-trip tests.
CALL=${CALL:-call3}; source bench/results/session43/scripts/common.sh
timeout 300 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_per_block)/|BM_D2H/(flash_store_steady|memcpy_batch|memcpy_per_block)/|BM_Compute/' \
  --benchmark_format=json --benchmark_out=$R/transfer.json > /dev/null 2> $R/transfer.err; echo "transfer rc=$?"
for r in 2 3; do
  timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_per_block)/block_KB:16/' \
    --benchmark_format=json --benchmark_out=$R/h2d-r$r.json > /dev/null 2> $R/h2d-r$r.err; echo "h2d r$r rc=$?"
done
timeout 200 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests --gtest_filter='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $R/memcheck.log | tr '\n' ' ')"
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for f in ["transfer.json", "h2d-r2.json", "h2d-r3.json"]:
    print("--", f)
    for b in json.load(open(f"{d}/{f}"))["benchmarks"]:
        name = b['name'].split('/iterations')[0]
        rate = b.get('bytes_per_second')
        extra = {k: round(v, 4) for k, v in b.items() if k in ('slowdown', 'slowdown_pct', 'SMs_used', 'sms')}
        print(f"{name:90s} {rate / 1e9 if rate else float('nan'):6.1f} GB/s  {b['real_time']:.1f} {b.get('time_unit','')} {extra}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
