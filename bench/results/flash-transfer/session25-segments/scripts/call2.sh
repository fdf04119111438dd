#!/bin/bash
# Session 25, call 2: the change's checks on the GPU machine (the whole GPU suite, the model tests,
# memcheck of the tests that read segments on the GPU), hgca-decode's default run before (main
# 7d61290) and after (20a19cf), and where FlashD2H's one-layer store path spends its time now
# (perf, cpu-clock, `flash_store_steady_varied` at 1 layer, the segments build).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
timeout 300 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -4 $R/gpu_tests.log
timeout 60 $D/bin/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -3
timeout 150 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests \
  --gtest_filter='SparseAttention.SegmentedKeysAndValues:GpuStoreMemory.*:*Overflow*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
for i in 1 2 3; do for b in main bin; do
  timeout 30 $D/$b/hgca-decode --json > $R/decode-$b-$i.json 2>/dev/null; echo "decode $b $i rc=$?"
done; done
S='BM_D2H/flash_store_steady_varied/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/'
timeout 90 perf record -e cpu-clock -g -o $R/perf.data $D/segments/hgca_bench_transfer --benchmark_filter="$S" --benchmark_repetitions=8 > $R/perf-bench.txt 2>&1
echo "perf rc=$?"; tail -3 $R/perf-bench.txt
perf report -i $R/perf.data --stdio --no-children --sort dso,symbol 2>/dev/null | grep -v "^#" | grep -v "^$" | grep "%" | head -40 > $R/perf-top.txt
rm -f $R/perf.data
python3 - $R <<'PY'
import json, sys, glob
for b in ("main", "bin"):
  rows = [json.load(open(p)) for p in sorted(glob.glob(f"{sys.argv[1]}/decode-{b}-*.json"))]
  keys = [k for k in ("tbt_ms_p50", "tbt_ms_p99", "tokens_per_s", "transfer_share", "prefill_s") if rows and k in rows[0]]
  print(b, {k: [r[k] for r in rows] for k in keys} if keys else (list(rows[0].keys())[:20] if rows else "none"))
PY
cat $R/perf-top.txt | head -30
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
