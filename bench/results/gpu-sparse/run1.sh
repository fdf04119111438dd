#!/bin/bash
# Verification after merging rt-numa, gqa, flash, overflow, store-mem.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin
timeout 120 $B/hgca_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $OUT/gpu_tests.log | head -20
timeout 40 $B/hgca_gpu_model_tests > $OUT/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $OUT/gpu_model.log | head -5
timeout 60 $B/hgca_bench_gpu_sparse --benchmark_out=$OUT/gpu_sparse.json --benchmark_out_format=json > $OUT/gpu_sparse.txt 2>&1; echo "sparse bench rc=$?"
timeout 40 $B/hgca_bench_store --benchmark_filter='Chunk' --benchmark_out=$OUT/store_gpu.json --benchmark_out_format=json > /dev/null 2>&1; echo "store bench rc=$?"
timeout 50 $B/hgca_bench_transfer --benchmark_filter='BM_D2H' --benchmark_out=$OUT/transfer_d2h.json --benchmark_out_format=json > /dev/null 2>&1; echo "d2h bench rc=$?"
for i in 1 2 3; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $OUT/decode.json
timeout 60 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='SparseAttention.*:All/SparseAttentionSweep.*/bf16_G4_D128:GpuStoreMemory*:Cases/FlashRoundTrip*:CudaGraph*' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
python3 $D/table.py
