#!/bin/bash
# Call 3: hgca-decode before (main 7f12e21) and after, alternating; the GPU tests (all but 3/4 of the sparse sweep and the slow window suite).
D=.device-h2d-latency
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
for i in 1 2 3; do
  timeout 30 $B/hgca-decode-base --json 2>/dev/null >> $OUT/decode_before.json
  timeout 30 $B/hgca-decode --json 2>/dev/null >> $OUT/decode_after.json
done
timeout 50 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:WindowAttention.LongWindow*:WindowAttention.BatchLarger*' > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=0 timeout 30 $B/hgca_gpu_tests --gtest_filter='All/SparseAttentionSweep.*' > $OUT/gpu_tests_sparse_shard0.log 2>&1; echo "sparse shard rc=$?"
grep -hE "tests ran|^\[  PASSED|^\[  FAILED" $OUT/gpu_tests.log $OUT/gpu_tests_sparse_shard0.log
python3 $D/decode_table.py $OUT/decode_before.json $OUT/decode_after.json
