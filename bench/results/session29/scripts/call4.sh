#!/bin/bash
# Session 29, call 4: main with the re-evaluation on the engine's weights kernel (2d0a9f9) and the
# enqueue cuts: the whole GPU suite, the GPU model tests, memcheck of the CUDA runtime and merge
# tests (e19fc0b's clock changes were not checked: call 2's files did not come back); the
# re-evaluation benchmark (engine kernel against the naive host attention, same run); hgca-decode's
# 32-layer run before (bcb66ba) and after, alternating, 2 runs each, and the default run 3 each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 200 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*:*MergeKernel*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
timeout 60 $D/bin/hgca_bench_cpu --benchmark_filter=BM_Reevaluation --benchmark_format=json --benchmark_out=$R/reeval.json > $R/reeval.txt 2>&1
echo "reeval rc=$?"; grep BM_ $R/reeval.txt | sed 's/  */ /g' | cut -c1-160
for i in 1 2; do
  for b in before after; do
    bin=$D/bin/hgca-decode; [ $b = before ] && bin=$D/bin/hgca-decode-before
    timeout 80 $bin --json --layers 32 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 1 --context 4096 --chunk 512 \
      > $R/decode32-$b-$i.json 2>$R/decode32-$b-$i.err || echo "32L $b $i rc=$?"
    date +%T
  done
done
for i in 1 2 3; do
  for b in before after; do
    bin=$D/bin/hgca-decode; [ $b = before ] && bin=$D/bin/hgca-decode-before
    timeout 30 $bin --json > $R/decode-$b-$i.json 2>$R/decode-$b-$i.err || echo "$b $i rc=$?"
  done
done
python3 - $R <<'PY'
import json, sys, glob
R = sys.argv[1]
print(f"{'run':<24} {'prefill s':>9} {'p50':>6} {'p99':>6} {'tok/s':>7} {'share':>6} {'sel':>6}")
for p in sorted(glob.glob(f"{R}/decode*.json")):
    try: r = json.load(open(p))
    except Exception as e: print(p.split('/')[-1], 'no result'); continue
    print(f"{p.split('/')[-1]:<24} {r['prefill_s']:9.2f} {r['tbt_ms_p50']:6.3f} {r['tbt_ms_p99']:6.3f} {r['tokens_per_s']:7.0f} {r['transfer_share']:6.3f} {r['selected_fraction']:6.4f}")
PY
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
