#!/bin/bash
# Session 8: how the store path's CPU scatter scales with threads on the GPU machine, against the
# pool scatter and the store memory's block allocation.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 200 $B/hgca_bench_store --benchmark_filter='BM_BlocksFromStoreMemory/16384/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/scaling.json > $R/scaling.log 2>&1; echo "rc=$?"
python3 - $R <<'PY'
import json, sys
for b in json.load(open(sys.argv[1] + "/scaling.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(b["run_name"], f'{b.get("bytes_per_second", 0) / 1e9:.1f} GB/s', f'{b.get("items_per_second", 0) / 1e6:.2f} M items/s')
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
