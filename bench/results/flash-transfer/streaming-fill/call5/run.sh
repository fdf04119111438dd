#!/bin/bash
# Session 10, call 5: the final library (bulk rows streamed into store blocks, a decode step's rows
# cached): GPU and model tests; hgca-decode's default run against bd47dd2 (base), alternated, 5 runs
# each; FlashD2H into the stores with its peers, twice.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
for rep in 1 2 3 4 5; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json; echo "decode $v $rep rc=$?"
done; done
for rep in 1 2; do
  timeout 150 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/block_KB:(4|16|64)/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:(4|16|64)/|BM_D2H/memcpy_per_block/block_KB:16/' --benchmark_format=json --benchmark_out=$R/d2h_$rep.json > /dev/null 2>&1; echo "d2h $rep rc=$?"
done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2, 3, 4, 5):
  for v in ("base", "new"):
    try:
      j = json.load(open(f"{R}/decode_{v}_{rep}.json"))
      print("decode", v, rep, j["backend"], "p50", round(j["tbt_ms_p50"], 3), "p99", round(j["tbt_ms_p99"], 3), "tok/s", round(j["tokens_per_s"]),
            "transfer share", round(j["transfer_share"], 4), "decode_transfer_ms", round(j["decode_transfer_ms"], 3))
    except Exception as e: print("decode", v, rep, e)
for rep in (1, 2):
  try:
    for b in json.load(open(f"{R}/d2h_{rep}.json"))["benchmarks"]:
      n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "")
      print(rep, n, f'{b["GBps_median"]:.1f}' + (f' (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f})' if "scatter_GBps" in b else ""))
  except Exception as e: print(rep, e)
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
grep -c "^\[       OK \]" $R/gpu_tests.log; tail -4 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
cat $R/summary.txt
