#!/bin/bash
# Session 27, call 9: memcheck of the rest of the GPU suite (the kernel tests and sweeps: sparse
# attention, window attention, the merge) on 2e12fa8's test binary, as far as 200 s take it.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call9; mkdir -p $R
F='SparseAttention.*:WindowAttention.*:Shapes/MergeKernel*:All/*'
t0=$(date +%s)
timeout 200 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter="$F" > $R/memcheck.log 2>&1
echo "memcheck rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -6
grep -c "^\[       OK \]" $R/memcheck.log
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
