#!/bin/bash
# Session 39, call 6: the CUDA allocation-failure sweep hung once in 10 runs in call 5. Up to 16
# runs of the new build and 16 of the old (d3fd132), 25 s each; a run still going at 20 s gets
# SIGUSR1, on which experiments/termbt.cpp prints every thread's stack.
CALL=call6; source bench/results/session39/scripts/common.sh
for v in new old; do
  T=$D/bin/hgca_gpu_alloc_tests; [ $v = old ] && T=$D/bin/hgca_gpu_alloc_tests.old
  hung=0
  for r in $(seq 1 16); do
    LD_PRELOAD=$PWD/$D/lib/libtermbt.so timeout 25 $T --gtest_filter='*Every*' > $R/$v-r$r.log 2>&1 & P=$!
    for s in $(seq 1 20); do sleep 1; kill -0 $P 2>/dev/null || break; done
    if kill -0 $P 2>/dev/null; then
      C=$(pgrep -P $P); kill -USR1 ${C:-$P}; sleep 3; hung=$((hung + 1)); echo "$v run $r hung"
    fi
    wait $P; echo "$v run $r rc=$?" >> $R/runs.txt
    [ $hung -ge 2 ] && break
  done
  echo "$v: $(grep -c "^$v.*rc=0" $R/runs.txt) passed, $hung hung, of $(grep -c "^$v" $R/runs.txt)"
done
cd $OUT && tar czf $CALL.tgz $CALL
for f in $CALL/*-r*.log; do grep -q "^stack" $f && { echo "== $f"; grep -A14 "^stack" $f | grep -v "libtermbt\|libc.so.6(+0x4" | head -150; break; }; done
rm -rf $CALL
