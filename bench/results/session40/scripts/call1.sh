#!/bin/bash
# Session 40, call 1: stop 39's last CUDA-backend changes (run_async noting the out-of-memory kind
# before the message, HostWindowBehind's message without the heap) on the GPU machine: the
# allocation-failure sweep 16 times (experiments/termbt.cpp preloaded: a stack if anything
# terminates), then every test program, memcheck, hgca-decode 3 times and the store fill, as
# session 39's call 1.
CALL=call1; source bench/results/session40/scripts/common.sh
for r in $(seq 1 16); do
  t0=$(date +%s%N); LD_PRELOAD=$PWD/$D/lib/libtermbt.so timeout 40 $D/bin/hgca_gpu_alloc_tests > $R/alloc-r$r.log 2>&1
  echo "run $r rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done > $R/alloc-loop.txt
echo "alloc sweep: $(grep -c 'rc=0' $R/alloc-loop.txt) of 16 passed; $(grep -v 'rc=0' $R/alloc-loop.txt | tr '\n' ' ')"
CALL=call1b bash bench/results/session39/scripts/call1.sh
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
