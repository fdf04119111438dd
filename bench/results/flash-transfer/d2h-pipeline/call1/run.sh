#!/bin/bash
# Session 8, call 1: FlashD2H's scatter into flat blocks with streaming stores (flash_pool_streaming)
# against cached stores (flash_pool), the store path and the CUDA peers, twice; the CPU-only scatter.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv > $R/machine.txt
lscpu > $R/lscpu.txt
for i in 1 2; do
  timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_D2H' --benchmark_format=json --benchmark_out=$R/d2h_$i.json > $R/d2h_$i.log 2>&1; echo "d2h $i rc=$?"
done
timeout 150 $B/hgca_bench_store --benchmark_filter='BM_Scatter/.*/threads:16/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/scatter.json > $R/scatter.log 2>&1; echo "scatter rc=$?"
python3 - $R <<'PY'
import json, sys, collections
R = sys.argv[1]
t = collections.defaultdict(list)
for i in (1, 2):
    for b in json.load(open(f"{R}/d2h_{i}.json"))["benchmarks"]:
        t[(b["name"].split("/")[1], int(b["block_KB"]))].append(round(b["GBps_median"], 1))
for (n, kb), v in sorted(t.items()): print(f"{n:24s} {kb:3d} KB  GB/s {v}")
for b in json.load(open(f"{R}/scatter.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median": print(b["run_name"], round(b["bytes_per_second"] / 1e9, 1), "GB/s")
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
