#!/bin/bash
# Session 29, call 6: main as this session ends (the host backend's dense part on the engine's
# kernels, b23c53d on): the whole GPU suite, the GPU model tests, the host suite on this Xeon's ISA
# paths, memcheck of the CUDA runtime and merge tests, and hgca-decode's default and 32-layer runs.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call6; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 200 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 120 $D/bin/hgca_tests --gtest_brief=1 > $R/host_tests.log 2>&1; echo "host_tests rc=$?"; tail -1 $R/host_tests.log
grep -E "^\[  FAILED" $R/host_tests.log | head -5
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*:*MergeKernel*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2; do timeout 30 $D/bin/hgca-decode --json > $R/decode-$i.json 2> $R/decode-$i.err || echo "default $i rc=$?"; done
timeout 60 $D/bin/hgca-decode --json --layers 32 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 1 --context 4096 \
  --chunk 512 > $R/decode32.json 2> $R/decode32.err || echo "32L rc=$?"
python3 - $R <<'PY'
import json, sys, glob
for p in sorted(glob.glob(f"{sys.argv[1]}/decode*.json")):
    r = json.load(open(p))
    print(f"{p.split('/')[-1]:<16} prefill {r['prefill_s']:6.2f} s  p50 {r['tbt_ms_p50']:6.3f}  p99 {r['tbt_ms_p99']:6.3f}  tok/s {r['tokens_per_s']:6.0f}  sel {r['selected_fraction']:.4f}")
PY
cd $OUT && tar czf call6.tgz call6 && rm -rf call6
