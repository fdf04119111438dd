#!/bin/bash
# Session 8: the store memory under a spinning lock (new) against std::mutex (base), same call:
# block allocation and the store scatter by threads, FlashD2H into the stores, the GPU tests of the
# store paths, hgca-decode.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
for v in base new; do
  s=$B/hgca_bench_store; t=$B/hgca_bench_transfer; [ $v = base ] && s=${s}_base && t=${t}_base
  timeout 100 $s --benchmark_filter='BM_BlocksFromStoreMemory/16384/0/|BM_Scatter/store/block_KB:16/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_$v.json > /dev/null 2>&1; echo "store $v rc=$?"
  timeout 100 $t --benchmark_filter='BM_D2H/flash_(store|pool)/block_KB:(4|16|64)/slots:(2|4)/' --benchmark_format=json --benchmark_out=$R/d2h_$v.json > /dev/null 2>&1; echo "d2h $v rc=$?"
done
timeout 200 $B/hgca_gpu_tests --gtest_filter='-*Sweep*:SparseAttention.*:WindowAttention.*:*MergeKernel*:*FlashH2DSpans*' > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -5
for i in 1 2; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for v in ("base", "new"):
    for b in json.load(open(f"{R}/store_{v}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(v, b["run_name"], f'{b["bytes_per_second"] / 1e9:.1f} GB/s')
    for b in json.load(open(f"{R}/d2h_{v}.json"))["benchmarks"]:
        print(v, b["name"].split("/iter")[0], f'{b["GBps_median"]:.1f} GB/s (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f})')
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j = json.loads(line); print("decode p50", round(j["tbt_ms_p50"], 3), "tok/s", round(j["tokens_per_s"]))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
