#!/bin/bash
# Session 45, call 1 (the commit in .device/commit): the misaligned-pointer test on a build without
# the check (hgca_gpu_tests_nofix: what a misaligned k does to the context) and with it; every test
# program; the allocation-failure programs (5 runs each); BM_Append (a 16-row append per item,
# 64 items) at 16 threads with the engine before (1fc1122) and after the row-first cut, interleaved.
CALL=${CALL:-call1}; source bench/results/session45/scripts/common.sh
timeout 120 $D/bin/hgca_gpu_tests_nofix --gtest_filter='CudaErrors.Misaligned*' > $R/nofix.log 2>&1; echo "nofix misaligned test rc=$?" | tee $R/summary.txt
for p in hgca_gpu_tests hgca_tests hgca_numa_tests hgca_model_tests hgca_gpu_model_tests; do
  timeout 400 $D/bin/$p > $R/$p.log 2>&1; rc=$?
  echo "$p rc=$rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|tests? ran' $R/$p.log | tr '\n' ' ')"
done | tee -a $R/summary.txt
for t in hgca_alloc_tests:5 hgca_gpu_alloc_tests:5; do
  p=${t%%:*}; runs=${t##*:}; ok=0
  for i in $(seq 1 $runs); do
    if timeout 60 $D/dbg/$p > $R/$p-$i.log 2>&1; then ok=$((ok + 1)); rm $R/$p-$i.log; fi
  done; echo "$p: $ok of $runs runs passed"
done | tee -a $R/summary.txt
for i in 1 2; do
  for v in before after; do
    b=$D/bin/hgca_bench_cpu; [ $v = before ] && b=$D/bin/hgca_bench_cpu_before
    timeout 100 $b --benchmark_filter='BM_Append/threads:0/' --benchmark_repetitions=5 \
      --benchmark_out=$R/append-$v-$i.json --benchmark_out_format=json > $R/append-$v-$i.txt 2>&1 || echo "append $v rc=$?"
  done
done
grep -H median $R/append-*.txt | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
