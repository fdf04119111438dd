#!/bin/bash
# Session 39, call 7: with HostCalls' lists reserved for every slot, the CUDA allocation-failure
# sweep 16 times (stacks on a hang, as in call 6), then hgca_gpu_tests.
CALL=call7; source bench/results/session39/scripts/common.sh
hung=0
for r in $(seq 1 16); do
  LD_PRELOAD=$PWD/$D/lib/libtermbt.so timeout 25 $D/bin/hgca_gpu_alloc_tests > $R/r$r.log 2>&1 & P=$!
  for s in $(seq 1 20); do sleep 1; kill -0 $P 2>/dev/null || break; done
  if kill -0 $P 2>/dev/null; then C=$(pgrep -P $P); kill -USR1 ${C:-$P}; sleep 3; hung=$((hung + 1)); fi
  wait $P; echo "run $r rc=$?" >> $R/runs.txt; [ $hung -ge 2 ] && break
done
echo "alloc sweep: $(grep -c 'rc=0' $R/runs.txt) passed, $hung hung, of $(grep -c '' $R/runs.txt): $(tr '\n' ' ' < $R/runs.txt)"
t0=$(date +%s); timeout 200 $D/bin/hgca_gpu_tests > $R/hgca_gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)' $R/hgca_gpu_tests.log | tr '\n' ' ')"
cd $OUT && tar czf $CALL.tgz $CALL; rm -rf $CALL
