#!/bin/bash
# Session 26, call 6: the GPU sparse kernel (the overflow policy's GPU side) over context sets in
# mapped pinned host memory, read in place over the link as the runtime does: each item's K and V
# contiguous against in a context cache's segments (first 512 rows, tables in pinned host memory
# too), with the link read over as many bytes as the peer; the device-memory decode beside it.
# The build of 417b653 plus BM_SparseDecodeHost; 3 repetitions.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call6; mkdir -p $R
timeout 400 $D/bin/hgca_bench_gpu_sparse --benchmark_filter='BM_SparseDecode' --benchmark_repetitions=3 \
  --benchmark_format=json --benchmark_out=$R/gpu_sparse.json > /dev/null 2> $R/err.txt || { echo failed; tail -5 $R/err.txt; }
python3 - $R/gpu_sparse.json <<'PY'
import collections, json, statistics as st, sys
runs = collections.defaultdict(list)
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") == "iteration":
        runs[b["name"].split("/iterations")[0]].append(b)
print(f"{'benchmark':52s} {'us':>9s} {'kv GB/s':>8s} {'read GB/s':>9s} {'vs read':>8s}")
for k, bs in runs.items():
    m = lambda c: st.median(x[c] for x in bs)
    print(f"{k:52s} {m('us'):9.1f} {m('kv_GBps'):8.1f} {m('read_GBps'):9.1f} {m('vs_read'):8.3f}")
PY
cd $OUT && tar czf call6.tgz call6 && rm -rf call6
