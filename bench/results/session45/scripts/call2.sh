#!/bin/bash
# Session 45, call 2 (the commit in .device/commit): issue 5's whole benchmark set in one run, as
# session 43's call 3 (FlashH2D at 4/16/64 KB on 2-8 SMs against per-block copies and
# cudaMemcpyBatchAsync; FlashD2H into steady stores at 1-32 layers against per-block and batch D2H
# copies; a compute-bound kernel alone and beside FlashD2H; the H2D 16 KB rows twice more;
# compute-sanitizer memcheck over the FlashH2D/round-trip tests), then issue 4's rows at 16 threads
# between two runs of PyTorch's CPU SDPA (as session 44's call 3).
CALL=${CALL:-call2}; source bench/results/session45/scripts/common.sh
timeout 300 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_per_block)/|BM_D2H/(flash_store_steady|memcpy_batch|memcpy_per_block)/|BM_Compute/' \
  --benchmark_format=json --benchmark_out=$R/transfer.json > /dev/null 2> $R/transfer.err; echo "transfer rc=$?"
for r in 2 3; do
  timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_per_block)/block_KB:16/' \
    --benchmark_format=json --benchmark_out=$R/h2d-r$r.json > /dev/null 2> $R/h2d-r$r.err; echo "h2d r$r rc=$?"
done
timeout 200 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests --gtest_filter='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*:CudaErrors.Misaligned*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $R/memcheck.log | tr '\n' ' ')"
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:(4|1)/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
python3 bench/results/session38/scripts/engine_table.py $R
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
