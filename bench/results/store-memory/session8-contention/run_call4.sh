#!/bin/bash
# Session 8: the store scatter with one allocator for all sequences (as a runtime) against one
# allocator per sequence, by threads.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 200 $B/hgca_bench_store --benchmark_filter='BM_Scatter/store.*/block_KB:(4|16|64)/' --benchmark_min_time=1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/own.json > $R/own.log 2>&1; echo "rc=$?"
python3 - $R <<'PY'
import json, sys
for b in json.load(open(sys.argv[1] + "/own.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median": print(b["run_name"], f'{b["bytes_per_second"] / 1e9:.1f} GB/s')
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
