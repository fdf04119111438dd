#!/bin/bash
# Session 34, call 7: compute-sanitizer memcheck (leak check on) over the whole GPU suite
CALL=${CALL:-call7}; source bench/results/session34/scripts/common.sh
F='*'
echo "tests: $($D/bin/hgca_gpu_tests --gtest_list_tests --gtest_filter="$F" | grep -c '^  ')"
t0=$(date +%s)
timeout 470 compute-sanitizer --tool memcheck --leak-check full $D/bin/hgca_gpu_tests --gtest_filter="$F" > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf $CALL.tgz $CALL
grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  PASSED|^\[  FAILED|tests ran" $CALL/memcheck.log | head
echo "tests finished: $(grep -c '^\[       OK' $CALL/memcheck.log)"; tail -3 $CALL/memcheck.log
cat $CALL/machine.txt; rm -rf $CALL
