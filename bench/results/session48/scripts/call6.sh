#!/bin/bash
# Session 48, call 6 (the working tree in .device/commit; one H200): the fix of call 5's finding — hwloc's
# OpenCL (and GL) plugins not run, and hgca-decode's SIGINT handler chained to one already there —
# checked: the interrupt tests 5 times each (the preloaded library's handler in the second), the numa
# tests, the spy again (no LLVM handler now), and hgca-decode's start-up: 5 tiny runs each of the
# old (1aecb00) and new binaries, wall seconds.
CALL=${CALL:-call6}; source bench/results/session48/scripts/common.sh
for f in $(strings $D/bin/hgca_decode_tests | grep -E '^/.*(/tools/hgca-decode/hgca-decode|libhgca_sigint_first\.so)$'); do
  mkdir -p $(dirname $f) && ln -sf $PWD/$D/bin/$(basename $f) $f
done
timeout 120 $D/bin/hgca_decode_tests --gtest_filter='*Interrupt*' --gtest_repeat=5 > $R/interrupt.log 2>&1
echo "interrupt tests x5 rc=$? $(grep -c '^\[       OK' $R/interrupt.log) ok $(grep -c '^\[  FAILED  \] HgcaDecode' $R/interrupt.log) failed" | tee $R/summary.txt
timeout 120 $D/bin/hgca_decode_tests > $R/decode_tests.log 2>&1
echo "decode tests rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/decode_tests.log | tr '\n' ' ')" | tee -a $R/summary.txt
timeout 60 $D/bin/hgca_numa_tests > $R/numa.log 2>&1
echo "numa rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $R/numa.log | tr '\n' ' ')" | tee -a $R/summary.txt
for v in old new; do
  bin=$D/bin/hgca-decode; [ $v = old ] && bin=$D/bin/hgca-decode-old
  LD_PRELOAD=$PWD/$D/diag/sigspy.so timeout 20 $bin --backend host --layers 1 --context 64 --chunk 64 \
    --decode-steps 1 --json > /dev/null 2> $R/spy-$v.txt
  echo "spy $v: $(grep -c '^SIGSPY' $R/spy-$v.txt) SIGINT handler calls, $(grep -c libLLVM $R/spy-$v.txt) lines from LLVM" | tee -a $R/summary.txt
done
for v in old new; do
  bin=$D/bin/hgca-decode; [ $v = old ] && bin=$D/bin/hgca-decode-old
  for i in 1 2 3 4 5; do
    python3 -c "import subprocess,time,sys; t=time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(f'{time.perf_counter()-t:.3f}')" \
      $bin --backend host --layers 1 --context 64 --chunk 64 --decode-steps 1 --json
  done | tr '\n' ' ' | sed "s/^/start-up $v (s): /" | tee -a $R/summary.txt; echo | tee -a $R/summary.txt
done
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
