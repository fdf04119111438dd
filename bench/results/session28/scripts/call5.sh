#!/bin/bash
# Session 28, call 5: main after the out-of-memory work (93e9b14: begin_step takes the step's store
# blocks; host-side fallbacks; error paths): the whole GPU suite, the GPU model tests, the host
# suite, memcheck of the CUDA runtime tests, and hgca-decode's default run, 4 runs each of the
# build before (acb2c7b, call 1's binary: hgca-decode-base) and after, alternating.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 100 $D/bin/hgca_tests --gtest_brief=1 > $R/host_tests.log 2>&1; echo "host_tests rc=$?"; tail -1 $R/host_tests.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3 4; do
  for b in base new; do
    bin=$D/bin/hgca-decode; [ $b = base ] && bin=$D/bin/hgca-decode-base
    timeout 30 $bin --json > $R/decode-$b-$i.json 2>$R/decode-$b-$i.err || echo "$b $i rc=$?"
  done
done
python3 - $R <<'PY'
import json, sys, glob
print(f"{'run':<22} {'p50':>6} {'p99':>6} {'tok/s':>7} {'share':>6}")
for p in sorted(glob.glob(f"{sys.argv[1]}/decode-*.json")):
    r = json.load(open(p))
    print(f"{p.split('/')[-1]:<22} {r['tbt_ms_p50']:6.3f} {r['tbt_ms_p99']:6.3f} {r['tokens_per_s']:7.0f} {r['transfer_share']:6.3f}")
PY
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
