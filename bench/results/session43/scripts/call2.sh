#!/bin/bash
# Session 43, call 2: issue 4's engine rows on all 16 threads (HGCA_BENCH_WS_MB=4096, the DRAM read
# beside each row) between two runs of PyTorch's CPU SDPA over the same subset, then issue 5's
# transfer rows with their peers (FlashH2D against per-block and batch copies; FlashD2H into the store
# against the batch D2H copy).
CALL=${CALL:-call2}; source bench/results/session43/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried/' \
  --benchmark_format=json --benchmark_out=$R/engine-r1.json > /dev/null 2> $R/engine-r1.err || echo "engine failed"
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store_steady/block_KB:16/slots:(8|16)/threads:0/selected_pct:10/layers:(4|16)/laps:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_H2D/(flash|memcpy_batch|memcpy_per_block)/block_KB:16/' \
  --benchmark_format=json --benchmark_out=$R/transfer.json > /dev/null 2> $R/transfer.err; echo "transfer rc=$?"
python3 bench/results/session38/scripts/engine_table.py $R
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for b in json.load(open(f"{d}/transfer.json"))["benchmarks"]:
    print(f"{b['name'].split('/iterations')[0]:90s} {b['bytes_per_second'] / 1e9:6.1f} GB/s")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
