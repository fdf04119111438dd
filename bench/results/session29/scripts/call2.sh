#!/bin/bash
# Session 29, call 2: main with two more enqueue cuts (e19fc0b: the transfer clock reads its events
# back once 64 stretches wait; its end event marks the copies staged): the whole GPU suite, memcheck
# of the CUDA runtime and merge tests; hgca-decode's default run and a 32-layer run: before
# (bcb66ba), mid (4e88b00, call 1's "after": batched memory operations, 3-sided merge) and after,
# alternating; the H2D rows at 16 KB with the link's ceiling (call 1 lacked libbenchmark).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
grep -E "^\[  FAILED|Failure" $R/gpu_tests.log | head -5
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests --gtest_brief=1 \
  --gtest_filter='Cuda*:FlashH2D*:GpuStoreMemory*:Modes/HostCallsTest*:*MergeKernel*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3 4 5 6; do
  for b in before mid after; do
    bin=$D/bin/hgca-decode; [ $b != after ] && bin=$D/bin/hgca-decode-$b
    timeout 30 $bin --json > $R/decode-$b-$i.json 2>$R/decode-$b-$i.err || echo "$b $i rc=$?"
  done
done
for i in 1 2 3; do
  for b in before mid after; do
    bin=$D/bin/hgca-decode; [ $b != after ] && bin=$D/bin/hgca-decode-$b
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
groups = {}
for p in glob.glob(f"{R}/decode*.json"):
    try: r = json.load(open(p))
    except Exception: continue
    g = p.split('/')[-1].rsplit('-', 1)[0]
    groups.setdefault(g, []).append((r['tbt_ms_p50'], st.median(r['enqueue_ms'][1:]), r['tokens_per_s']))
print(f"{'group (median of runs)':<24} {'p50':>6} {'enq med':>8} {'tok/s':>7}")
for g in sorted(groups):
    v = groups[g]
    print(f"{g:<24} {st.median(x[0] for x in v):6.3f} {st.median(x[1] for x in v):8.3f} {st.median(x[2] for x in v):7.0f}")
for b in json.load(open(f"{R}/h2d.json"))["benchmarks"]:
    print(f"{b['name']:<50} {b['GBps_median']:6.1f} GB/s")
PY
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
