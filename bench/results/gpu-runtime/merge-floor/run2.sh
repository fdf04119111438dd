set -u
D=.device-merge
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin
T=$OUT/logs; mkdir -p $T
$B/hgca_bench_layer --benchmark_filter='Merge' --benchmark_format=json --benchmark_out=$OUT/merge_pass1.json >/dev/null 2>$T/bench_stderr.txt || echo "bench pass 1 rc $?"
for p in 2 3 4; do
  $B/hgca_bench_layer --benchmark_filter='BM_MergeZeroCopy|BM_MergeLseFirst|BM_MergeFloorRead/512/8/' --benchmark_format=json --benchmark_out=$OUT/merge_pass$p.json >/dev/null 2>>$T/bench_stderr.txt || echo "bench pass $p rc $?"
done
timeout 60 $B/hgca_gpu_tests --gtest_filter='*Merge*' > $T/merge_tests.log 2>&1; echo "merge tests rc=$?"; grep -E "^\[  FAILED|PASSED|SKIPPED" $T/merge_tests.log | head -5
timeout 45 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*Merge*' > $T/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $T/memcheck.log | head -5
timeout 35 $B/hgca_gpu_tests --gtest_filter='-All/SparseAttentionSweep.*:SparseAttention.*:All/WindowAttentionSweep.*' > $T/runtime_tests.log 2>&1; echo "runtime suites rc=$?"; grep -E "^\[  FAILED|PASSED|tests ran" $T/runtime_tests.log | head -8
python3 $D/table.py $OUT/merge_pass1.json | tee $OUT/table.txt
for p in 2 3 4; do python3 $D/table.py $OUT/merge_pass$p.json; done | tee -a $OUT/table.txt
(cd $OUT && tar czf logs.tgz logs && rm -rf logs)
