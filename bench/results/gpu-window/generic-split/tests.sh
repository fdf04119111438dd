# Sourced by the calls' run.sh with B (the binaries) and R (the results folder) set: the whole GPU
# suite and the model tests; memcheck and racecheck of WindowAttention.GenericPathSplitsLongKeys.
mkdir -p /work/main && ln -sfn $PWD/.device/shared /work/shared
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|SKIPPED \]|tests ran" $R/gpu_tests.log | head -8
timeout 60 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -3
for t in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $t $B/hgca_gpu_tests --gtest_filter='WindowAttention.GenericPathSplitsLongKeys' > $R/$t.log 2>&1
  echo "$t rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/$t.log | head -3
done
