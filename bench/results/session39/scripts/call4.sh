#!/bin/bash
# Session 39, call 4: where hgca_gpu_alloc_tests' sweep terminates (call 3: "terminate called after
# throwing std::bad_alloc"): up to 10 runs with experiments/termbt.cpp preloaded, which prints the
# stack at std::terminate (resolved afterwards with addr2line on the unstripped build).
CALL=${CALL:-call4}; source bench/results/session39/scripts/common.sh
for r in $(seq 1 10); do
  t0=$(date +%s); LD_PRELOAD=$PWD/$D/lib/libtermbt.so timeout 60 $D/bin/hgca_gpu_alloc_tests --gtest_filter='*Every*' > $R/every-r$r.log 2>&1
  rc=$?; echo "run $r rc=$rc $(( $(date +%s) - t0 )) s"; [ $rc = 0 ] || { grep -A40 "terminate: backtrace" $R/every-r$r.log | head -45; break; }
done
cd $OUT && tar czf $CALL.tgz $CALL; rm -rf $CALL
