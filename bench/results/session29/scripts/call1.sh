#!/bin/bash
# Session 29, call 1: main with the enqueue cuts (24c202a: a host call's three stream memory
# operations in one cuStreamBatchMemOp; 4c1b2a1: one 3-sided merge launch instead of two): the whole
# GPU suite, the GPU model tests, memcheck of the CUDA runtime and merge tests; hgca-decode's
# default run and a 32-layer run, before (bcb66ba: hgca-decode-before) and after, alternating; the
# H2D rows at 16 KB with the link's ceiling (one contiguous copy).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call1; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*:*MergeKernel*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3 4 5 6; do
  for b in before after; do
    bin=$D/bin/hgca-decode; [ $b = before ] && bin=$D/bin/hgca-decode-before
    timeout 30 $bin --json > $R/decode-$b-$i.json 2>$R/decode-$b-$i.err || echo "$b $i rc=$?"
  done
done
for i in 1 2 3; do
  for b in before after; do
    bin=$D/bin/hgca-decode; [ $b = before ] && bin=$D/bin/hgca-decode-before
    timeout 60 $bin --json --layers 32 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 1 --context 4096 --chunk 512 \
      > $R/decode32-$b-$i.json 2>$R/decode32-$b-$i.err || echo "32L $b $i rc=$?"
  done
done
timeout 120 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_per_block|memcpy_contiguous)/block_KB:16/' \
  --benchmark_format=json --benchmark_out=$R/h2d.json > $R/h2d.txt 2>&1; echo "h2d rc=$?"
python3 - $R <<'PY'
import json, sys, glob, statistics as st
R = sys.argv[1]
print(f"{'run':<24} {'p50':>6} {'p99':>6} {'tok/s':>7} {'share':>6} {'enq med':>8}")
for p in sorted(glob.glob(f"{R}/decode*.json")):
    try: r = json.load(open(p))
    except Exception as e: print(p, e); continue
    enq = st.median(r['enqueue_ms'][1:]) if len(r.get('enqueue_ms', [])) > 1 else float('nan')
    print(f"{p.split('/')[-1]:<24} {r['tbt_ms_p50']:6.3f} {r['tbt_ms_p99']:6.3f} {r['tokens_per_s']:7.0f} {r['transfer_share']:6.3f} {enq:8.3f}")
for b in json.load(open(f"{R}/h2d.json"))["benchmarks"]:
    print(f"{b['name']:<50} {b['GBps_median']:6.1f} GB/s")
PY
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
