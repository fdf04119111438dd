#!/bin/bash
# Session 36, call 14: 4cfd796's topology line on the GPU machine (the machine's memory in the
# first line, each node's as the OS reports it): hgca-tune --quick, and the NUMA tests (bin/t).
CALL=${CALL:-call14}; source bench/results/session36/scripts/common.sh
timeout 60 $D/bin/t/hgca_numa_tests > $R/numa_tests.log 2>&1; echo "hgca_numa_tests rc=$?"
timeout 120 $D/bin/t/hgca-tune --quick > $R/hgca-tune-quick.txt 2> $R/hgca-tune-quick.err; echo "hgca-tune rc=$?"
grep MemTotal /proc/meminfo > $R/meminfo.txt; head -2 /sys/devices/system/node/node0/meminfo >> $R/meminfo.txt 2>&1
cd $OUT && tar czf $CALL.tgz $CALL
echo "numa_tests: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $CALL/numa_tests.log)"
head -4 $CALL/hgca-tune-quick.txt; cat $CALL/meminfo.txt
cat $CALL/machine.txt; rm -rf $CALL
