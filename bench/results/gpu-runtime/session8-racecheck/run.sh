#!/bin/bash
# Session 8: racecheck of the 23 non-sweep GPU tests that session 7's racecheck call did not reach.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
F='Cases/FlashRoundTrip.*:Shapes/CudaOverflowAlways.*:Shapes/ExactFp32.*:Dtypes/ExactSixteenBit.*:Cases/NothingLost.*:Modes/HostCallsTest.DirectCallsFreeTheirSlots/callback'
timeout 560 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$F" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|hazard|PASSED|FAILED|tests ran" $R/racecheck.log | head -8
echo "ok: $(grep -c '^\[       OK' $R/racecheck.log)"
(cd $OUT && tar czf results.tgz r && rm -rf r)
