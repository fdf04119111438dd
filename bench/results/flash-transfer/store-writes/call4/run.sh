#!/bin/bash
# Session 11, call 4: the final library (8f49e7f) against the session's start (ec04a1e, "before"):
# hgca-decode's default run alternated, 5 runs each; FlashD2H beside a compute-bound kernel; FlashD2H
# into the stores (auto, the default) with its peers, one round.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2 3 4 5; do for v in before after; do
  d=$B/hgca-decode; [ $v = before ] && d=${d}_before
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json || echo "decode $v $rep failed"
done; done
timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_Compute/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/' --benchmark_format=json --benchmark_out=$R/d2h.json > /dev/null 2>&1; echo "d2h rc=$?"
python3 - $R <<'PY' > $R/summary.txt
import json, sys, statistics
R = sys.argv[1]
for v in ("before", "after"):
  js = [json.load(open(f"{R}/decode_{v}_{r}.json")) for r in (1, 2, 3, 4, 5)]
  p = [j["tbt_ms_p50"] for j in js]
  print("decode", v, "p50", " ".join(f"{x:.3f}" for x in p), "mean", f"{statistics.mean(p):.3f}",
        "p99 mean", f'{statistics.mean(j["tbt_ms_p99"] for j in js):.3f}',
        "tok/s mean", round(statistics.mean(j["tokens_per_s"] for j in js)),
        "transfer share mean", f'{statistics.mean(j["transfer_share"] for j in js):.3f}')
for b in json.load(open(f"{R}/d2h.json"))["benchmarks"]:
  n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "")
  x = {k: round(v, 3) for k, v in b.items() if k in ("GBps_median", "copy_GBps", "scatter_GBps", "rows_streamed", "real_time", "slowdown", "kernel_ms_median")}
  print(n, x)
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
cat $R/summary.txt
