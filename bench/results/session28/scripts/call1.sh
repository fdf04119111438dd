#!/bin/bash
# Session 28, call 1: main as it stands (acb2c7b; code as of 2c95843, which session 27 did not run
# on the GPU machine): the whole GPU suite, the GPU model tests, the host suite, memcheck of the
# CUDA runtime tests (errors, abandon-on-failure, graphs, hand-offs) and hgca-decode's default run.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call1; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -2 $R/gpu_model.log
timeout 100 $D/bin/hgca_tests --gtest_brief=1 > $R/host_tests.log 2>&1; echo "host_tests rc=$?"; tail -2 $R/host_tests.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3; do timeout 30 $D/bin/hgca-decode --json > $R/decode-$i.json 2>$R/decode-$i.err; echo "decode $i rc=$?"; done
python3 - $R <<'PY'
import json, sys, glob
rows = [json.load(open(p)) for p in sorted(glob.glob(f"{sys.argv[1]}/decode-*.json"))]
for r in rows: print({k: r[k] for k in r if not isinstance(r[k], (dict, list))})
PY
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
