#!/bin/bash
# Session 39, call 5: the CUDA allocation-failure sweep 10 times (experiments/termbt.cpp preloaded:
# a stack if anything terminates), then call 1's whole list (the suite, memcheck, hgca-decode, the
# store fill) at the commit that reads the machine's memory without the heap.
CALL=call5; source bench/results/session39/scripts/common.sh
for r in $(seq 1 10); do
  t0=$(date +%s%N); LD_PRELOAD=$PWD/$D/lib/libtermbt.so timeout 60 $D/bin/hgca_gpu_alloc_tests > $R/alloc-r$r.log 2>&1
  echo "alloc sweep run $r rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(grep -E '^\[  (PASSED|FAILED)' $R/alloc-r$r.log | tr '\n' ' ')"
done | tee $R/alloc-loop.txt
CALL=call5 bash bench/results/session39/scripts/call1.sh
