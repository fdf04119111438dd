#!/bin/bash
# Session 39, call 2: why hgca_gpu_alloc_tests' sweep ran past 240 s in call 1 (2.5 s at b8231eb):
# the two tests apart, timed, the old build beside the new, with the process sampled as it runs
# (FIRST: a test program to run before them, as call 1 did; ORDER, SAMPLES: which builds, how long).
CALL=${CALL:-call2}; source bench/results/session39/scripts/common.sh
sample() {  # pid: CPU, RSS, threads' wait channels, MemAvailable
  ps -o pid=,pcpu=,rss=,nlwp= -p $1; grep MemAvailable /proc/meminfo
  for t in /proc/$1/task/*; do cat $t/wchan 2>/dev/null; echo; done | sort | uniq -c | sort -rn | head -5
}
[ -n "$FIRST" ] && { t0=$(date +%s); timeout 240 $D/bin/$FIRST > $R/$FIRST.log 2>&1; echo "$FIRST rc=$? $(( $(date +%s) - t0 )) s"; }
for v in ${ORDER:-old new}; do
  T=$D/bin/hgca_gpu_alloc_tests; [ $v = old ] && T=$D/bin/hgca_gpu_alloc_tests.old
  t0=$(date +%s%N); timeout 60 stdbuf -oL $T --gtest_filter='*AddSequence*' > $R/$v-add.log 2>&1; echo "$v AddSequence rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  stdbuf -oL $T --gtest_filter='*Every*' > $R/$v-every.log 2>&1 & P=$!; t0=$(date +%s)
  for i in $(seq 1 ${SAMPLES:-9}); do
    sleep 10; kill -0 $P 2>/dev/null || break
    echo "--- $v t=$(( $(date +%s) - t0 )) s" >> $R/$v-samples.txt; sample $P >> $R/$v-samples.txt
    [ $i = 3 ] && command -v gdb > /dev/null && timeout 60 gdb -p $P -batch -ex 'thread apply all bt 12' > $R/$v-gdb.txt 2>&1
  done
  kill $P 2>/dev/null; wait $P; echo "$v Every rc=$? after $(( $(date +%s) - t0 )) s"; tail -3 $R/$v-every.log
done
cd $OUT && tar czf $CALL.tgz $CALL
tail -20 $CALL/new-samples.txt; grep -c "" $CALL/new-gdb.txt 2>/dev/null; rm -rf $CALL
