#!/bin/bash
# Session 32, call 6: mutations of 0e43ee2 against the new tests. hgca_gpu_tests_m1: the plan no
# longer brings the waiting rows of the next slot's last call into the host window (the
# `else if (unpushed_[last->layer] == last)` branch removed); _m2: the plan no longer waits for the
# scatter of the next slot's last call (`if (job.frees_lane >= 0) ...` removed); hgca_gpu_tests:
# 0e43ee2 itself. 3 runs of each mutant.
export LD_LIBRARY_PATH=$PWD/.device/lib; F='*Sharing*:*SharedStaging*:CudaStaging.*:Cases/NothingLost.*/bf16_4'; for m in m1 m2; do for r in 1 2 3; do timeout 60 .device/bin/hgca_gpu_tests_$m --gtest_filter="$F" 2>&1 | grep -E "^\[  (PASSED|FAILED) " | sed "s/^/$m r$r /"; done; done; .device/bin/hgca_gpu_tests --gtest_filter="$F" 2>&1 | grep -E "^\[  (PASSED|FAILED|  OK) |OK \]"
