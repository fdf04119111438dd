#!/bin/bash
# Session 28, call 8: main at 42d600a (entries that joined the store unselected are judged by the
# next commit with room): the whole GPU suite, the GPU model tests, the host suite, memcheck of the
# CUDA runtime tests, the out-of-memory tests 5 times, and hgca-decode's default run 3 times.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call8; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 100 $D/bin/hgca_tests --gtest_brief=1 > $R/host_tests.log 2>&1; echo "host_tests rc=$?"; tail -1 $R/host_tests.log
timeout 100 $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_repeat=5 --gtest_filter='CudaErrors.*:CudaGraph.Store*' > $R/oom.log 2>&1
echo "oom x5 rc=$?"; grep -cE "^\[  PASSED" $R/oom.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3; do timeout 30 $D/bin/hgca-decode --json > $R/decode-$i.json 2>$R/decode-$i.err || echo "decode $i rc=$?"; done
python3 - $R <<'PY'
import json, sys, glob
for p in sorted(glob.glob(f"{sys.argv[1]}/decode-*.json")):
    r = json.load(open(p))
    print(p.split('/')[-1], f"p50 {r['tbt_ms_p50']:.3f} p99 {r['tbt_ms_p99']:.3f} tok/s {r['tokens_per_s']:.0f} share {r['transfer_share']:.3f} sel {r['selected_fraction']:.4f}")
PY
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
