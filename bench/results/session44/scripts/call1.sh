#!/bin/bash
# Session 44, call 1 (7d00feb): every test program after the head-dim fix (c3a83d3; the exact suite
# and the overflow policy now run head dims 40, 120, 200 on the CUDA backend too).
CALL=${CALL:-call1}; source bench/results/session44/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 300 $D/bin/$t > $R/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done | tee $R/summary.txt
grep -hE '^\[  FAILED  \]' $R/*.log | sort -u | head -20
for t in hgca_tests hgca_gpu_tests; do
  echo "$t head dims: $(grep -cE '^\[       OK \] .*(d40|d120|d200|_40_|_120_|_200_)' $R/$t.log) OK at 40/120/200"
done
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
