#!/bin/bash
# Session 10, call 4: the GPU and model tests at the final library (rows streamed into store
# blocks); hgca-decode's default run against bd47dd2 (base), alternated, 4 runs each; and an
# experiment: the context caches' rows streamed too (ctxnt) against the final library, twice.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
for rep in 1 2 3 4; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json; echo "decode $v $rep rc=$?"
done; done
for rep in 1 2; do for v in final ctxnt; do
  timeout 60 $B/hgca_bench_store_$v --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:(10|50)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/ab_store_${v}_$rep.json > /dev/null 2>&1; echo "store $v $rep rc=$?"
  timeout 90 $B/hgca_bench_transfer_$v --benchmark_filter='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:(10|50)/layers:1/' --benchmark_format=json --benchmark_out=$R/ab_d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2, 3, 4):
  for v in ("base", "new"):
    try:
      j = json.load(open(f"{R}/decode_{v}_{rep}.json"))
      print("decode", v, rep, j["backend"], "p50", round(j["tbt_ms_p50"], 3), "p99", round(j["tbt_ms_p99"], 3), "tok/s", round(j["tokens_per_s"]),
            "transfer share", round(j["transfer_share"], 4), "decode_transfer_ms", round(j["decode_transfer_ms"], 3))
    except Exception as e: print("decode", v, rep, e)
for rep in (1, 2):
  for v in ("final", "ctxnt"):
    try:
      for b in json.load(open(f"{R}/ab_store_{v}_{rep}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(rep, v, b["run_name"].replace("/real_time", ""), f'{b["bytes_per_second"] / 1e9:.1f}')
      for b in json.load(open(f"{R}/ab_d2h_{v}_{rep}.json"))["benchmarks"]:
        print(rep, v, b["name"].split("/iter")[0].replace("/threads:0", ""), f'{b["GBps_median"]:.1f} (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f})')
    except Exception as e: print(v, rep, e)
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
grep -c "^\[       OK \]" $R/gpu_tests.log; tail -4 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
cat $R/summary.txt
