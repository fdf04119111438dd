#!/bin/bash
# Session 48, call 13: where call 12's new hgca-decode (inputs made on every core) segfaults here, with
# segvspy.so (scripts/segvspy.c: the faulting thread's raw backtrace) and the maps to resolve it.
CALL=${CALL:-call13}; source bench/results/session48/scripts/common.sh
HGCA_CONFIG= LD_PRELOAD=$PWD/$D/diag/segvspy.so timeout 30 $D/bin/hgca-decode --json > $R/out.json 2> $R/err.txt &
pid=$!; sleep 0.2; cat /proc/$pid/maps > $R/maps.txt 2>/dev/null; wait $pid; echo "rc=$?"
grep -A30 STACK $R/err.txt | head -40; grep hgca-decode $R/maps.txt | head -2
cd $OUT && tar czf $CALL.tgz $CALL && rm -rf $CALL
