#!/bin/bash
# Intermediate verification of main after merging d2h-store, h2d-latency, gqa-cluster, engine-dram,
# and the cost model's CPU fixed cost: CPU-side numbers, hgca-tune, hgca-decode per overflow mode,
# the GPU tests the merges touch.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
nproc; lscpu | grep -E "Model name" 
timeout 60 $B/hgca_tests > $OUT/tests.log 2>&1; echo "hgca_tests rc=$?"; grep -E "^\[  FAILED|PASSED" $OUT/tests.log | head
timeout 70 $B/hgca_gpu_tests --gtest_filter='CudaGraph*:CudaAsync*:*Capture*:WindowAttention.*:Cuda*Exhaust*:*StoreMemory*:*FlashD2H*:*Flash*' > $OUT/gpu_tests_sub.log 2>&1; echo "gpu subset rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests_sub.log | head
for i in 1 2; do for m in off auto always; do timeout 20 $B/hgca-decode --overflow $m --json 2>/dev/null; done; done > $OUT/decode.json
HGCA_BENCH_WS_MB=4096 timeout 150 $B/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_Decode/threads:1/isa:4/dtype:2|BM_DecodeVaried' --benchmark_out=$OUT/bench_cpu.json --benchmark_out_format=json > /dev/null 2>&1; echo "bench_cpu rc=$?"
HGCA_BENCH_WS_MB=4096 timeout 90 python3 bench/peers/torch_cpu_sdpa.py > $OUT/torch_cpu_sdpa.json 2> $OUT/torch_cpu_sdpa.err; echo "torch cpu rc=$?"
timeout 150 $B/hgca-tune --out $OUT/hgca-config.json --svg $OUT/hgca-tune.svg > $OUT/hgca-tune.txt 2> $OUT/hgca-tune.err; echo "tune rc=$?"
tail -25 $OUT/hgca-tune.txt
python3 $D/table-mid.py $OUT
