#!/bin/bash
# Session 36, call 11: the committed test binaries (bin/d1, with the 64- and 65-span lists either
# side of FlashH2D's small parameter block): the FlashH2D tests and round trips, plain and under
# memcheck and racecheck; the CPU suite on the Xeon.
CALL=${CALL:-call11}; source bench/results/session36/scripts/common.sh
F='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*'
timeout 60 $D/bin/d1/hgca_gpu_tests --gtest_filter="$F" > $R/flash_tests.log 2>&1; echo "flash tests rc=$?"
timeout 120 compute-sanitizer --tool memcheck --leak-check full $D/bin/d1/hgca_gpu_tests --gtest_filter="$F" > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
timeout 120 compute-sanitizer --tool racecheck $D/bin/d1/hgca_gpu_tests --gtest_filter="$F" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
timeout 120 $D/bin/d1/hgca_tests > $R/cpu_tests.log 2>&1; echo "hgca_tests rc=$?"
cd $OUT && tar czf $CALL.tgz $CALL
for f in flash_tests memcheck racecheck cpu_tests; do
  echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY' $CALL/$f.log | tr '\n' ' ')"
done
grep -h "FlashH2DSpans" $CALL/flash_tests.log | grep OK
cat $CALL/machine.txt; rm -rf $CALL
