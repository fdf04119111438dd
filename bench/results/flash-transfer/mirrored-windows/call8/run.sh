#!/bin/bash
# Session 9, call 8: per-head store work in the calling thread when small (prev: always a
# parallel_for over heads), alternated with the previous binary; the CPU-only store scatter;
# hgca-decode at HEAD against the base (703a2b7), alternated.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do for v in prev new; do
  t=$B/hgca_bench_transfer; s=$B/hgca_bench_store; [ $v = prev ] && t=${t}_prev && s=${s}_prev
  timeout 60 $t --benchmark_filter='BM_D2H/flash_store/block_KB:(16|64)/slots:4/threads:0/selected_pct:(10|50)/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
  timeout 60 $s --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:(16|64)/threads:16/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
done; done
for rep in 1 2 3; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json; echo "decode $v $rep rc=$?"
done; done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for rep in (1, 2):
  for v in ("prev", "new"):
    for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, v, n, f'{b["GBps_median"]:.1f} (scatter {b["scatter_GBps"]:.1f}, sel {b.get("selected_fraction", 0):.3f})')
    for b in json.load(open(f"{R}/store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(rep, v, b["run_name"], f'{b["bytes_per_second"] / 1e9:.1f}')
for rep in (1, 2, 3):
  for v in ("base", "new"):
    j = json.load(open(f"{R}/decode_{v}_{rep}.json"))
    print("decode", v, rep, "p50", round(j["tbt_ms_p50"], 3), "p99", round(j["tbt_ms_p99"], 3), "tok/s", round(j["tokens_per_s"]), "transfer share", round(j["transfer_share"], 4))
PY
