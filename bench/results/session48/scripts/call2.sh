#!/bin/bash
# Session 48, call 2 (the commit in .device/commit; one H200): the tests this stop changed — the shuffled
# FlashD2H→FlashH2D round trip, split_threads' tie to the GPU's node (numa tests), hgca-decode's
# command-line tests (hgca-decode put where the test program looks for it) — then the new CTest
# test cuda.memcheck's command (tests/gpu/memcheck.sh with the filter tests/CMakeLists.txt gives it), timed.
CALL=${CALL:-call2}; source bench/results/session48/scripts/common.sh
timeout 120 $D/bin/hgca_gpu_tests --gtest_filter='*FlashRoundTrip*:*FlashH2D*' > $R/roundtrip.log 2>&1
echo "round trip rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $R/roundtrip.log | tr '\n' ' ')" | tee $R/summary.txt
timeout 60 $D/bin/hgca_numa_tests > $R/numa.log 2>&1
echo "numa rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $R/numa.log | tr '\n' ' ')" | tee -a $R/summary.txt
exe=$(strings $D/bin/hgca_decode_tests | grep -m1 '/tools/hgca-decode/hgca-decode$')
mkdir -p $(dirname $exe) && ln -sf $PWD/$D/bin/hgca-decode $exe
timeout 120 $D/bin/hgca_decode_tests > $R/decode_tests.log 2>&1
echo "decode tests ($exe) rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/decode_tests.log | tr '\n' ' ')" | tee -a $R/summary.txt
filter=$(grep -A1 'memcheck.sh $<TARGET_FILE' tests/CMakeLists.txt | sed -n 's/^ *"\(.*\)")$/\1/p')
s=$(date +%s); timeout 400 tests/gpu/memcheck.sh $D/bin/hgca_gpu_tests "$filter" > $R/memcheck.log 2>&1; rc=$?
echo "memcheck.sh '$filter' rc=$rc $(( $(date +%s) - s ))s $(grep -E 'ERROR SUMMARY|^\[  PASSED  \]|^\[  FAILED  \]' $R/memcheck.log | tr '\n' ' ')" | tee -a $R/summary.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
