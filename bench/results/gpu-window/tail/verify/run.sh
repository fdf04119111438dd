#!/bin/bash
# Session 17, call 9: after launch_decode_t's single cluster launch went through launch_cluster (no
# behaviour change): the window, planner and graph tests, and the goal shape, 3 runs.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
timeout 240 $B/hgca_gpu_tests --gtest_filter='*Window*:*Planner*:CudaGraph*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]" $R/tests.log | head
for r in 1 2 3; do timeout 60 $B/hgca_bench_gpu_new --benchmark_filter='WindowDecode/batch:(8|16)/hkv:8/window:16384/' 2>/dev/null | grep WindowDecode | awk '{print $1, $2}'; done | tee $R/goal.txt
