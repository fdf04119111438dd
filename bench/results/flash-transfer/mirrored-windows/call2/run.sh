#!/bin/bash
# Session 9, call 2: FlashD2H into the stores with the host windows in store blocks (row by row
# fill), each step's blocks allocated as its copy is issued (the backend's enqueue); the store
# scatter alone with its blocks allocated ahead, inside, or per-sequence allocators; pool reference.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do
  timeout 120 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/block_KB:(4|16|64)/slots:(2|4)/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_$rep.json > /dev/null 2>&1; echo "d2h $rep rc=$?"
done
timeout 90 $B/hgca_bench_store --benchmark_filter='BM_Scatter/(store|store_allocated_ahead|store_own_memory|pool)/block_KB:(4|16)/threads:(1|16)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store.json > /dev/null 2>&1; echo "store rc=$?"
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for rep in (1, 2):
    for b in json.load(open(f"{R}/d2h_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, n, f'{b["GBps_median"]:.1f} GB/s (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f}, sel {b.get("selected_fraction", 0):.3f})')
for b in json.load(open(f"{R}/store.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median": print(b["run_name"], f'{b["bytes_per_second"] / 1e9:.1f} GB/s')
PY
