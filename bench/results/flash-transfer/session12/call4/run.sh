#!/bin/bash
# Session 12, call 4: the ordering test of FlashH2D's chained launches, with the end wait (the
# library) and without it (gpu_tests_nowait: the kernel's griddepcontrol.wait commented out), 5 runs each.
export LD_LIBRARY_PATH=$PWD/.device/lib
for i in 1 2 3 4 5; do for b in hgca_gpu_tests gpu_tests_nowait; do
  echo "$b: $(.device/bin/$b --gtest_filter='FlashH2D.*' 2>&1 | grep -E '^\[  (PASSED|FAILED) ' | tr '\n' ' ')"
done; done
