#!/bin/bash
# Session 9, call 17: two candidates for the store scatter's poor scaling, alternated with HEAD:
# "aligned" (each store block's shared_ptr control block on cache lines of its own: alignas(64)),
# "tbbmalloc" (HEAD with oneTBB's scalable malloc preloaded).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do for v in head aligned tbbmalloc; do
  t=$B/hgca_bench_transfer; s=$B/hgca_bench_store; pre=""
  [ $v = aligned ] && t=${t}_aligned && s=${s}_aligned
  [ $v = tbbmalloc ] && pre="LD_PRELOAD=$PWD/$D/lib/libtbbmalloc_proxy.so.2"
  env $pre timeout 60 $s --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:(1|10)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
  env $pre timeout 60 $t --benchmark_filter='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2):
  for v in ("head", "aligned", "tbbmalloc"):
    for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(rep, v, b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f}')
    for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, v, n, f'{b["GBps_median"]:.1f} (scatter {b["scatter_GBps"]:.1f})')
PY
cat $R/summary.txt; rm -f $R/*.json
