#!/bin/bash
# Session 11, call 1: StoreWrites (auto / cached / streamed) on the GPU machine. GPU and model tests;
# FlashD2H into the stores and its peers under each mode (HGCA_BENCH_STORE_WRITES), two alternated
# rounds; hgca-decode's default run under each mode (--store-writes), four alternated rounds.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
F='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/|BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2; do for m in cached auto streamed; do
  HGCA_BENCH_STORE_WRITES=$m timeout 100 $B/hgca_bench_transfer --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${m}_$rep.json > /dev/null 2>&1; echo "d2h $m $rep rc=$?"
done; done
for rep in 1 2 3 4; do for m in cached auto streamed; do
  timeout 30 $B/hgca-decode --json --store-writes $m 2>/dev/null > $R/decode_${m}_$rep.json || echo "decode $m $rep failed"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys, statistics
R = sys.argv[1]
modes = ("cached", "auto", "streamed")
for m in modes:
  p = [json.load(open(f"{R}/decode_{m}_{r}.json"))["tbt_ms_p50"] for r in (1, 2, 3, 4)]
  t = [json.load(open(f"{R}/decode_{m}_{r}.json"))["tokens_per_s"] for r in (1, 2, 3, 4)]
  s = [json.load(open(f"{R}/decode_{m}_{r}.json"))["transfer_share"] for r in (1, 2, 3, 4)]
  print("decode", m, "p50", " ".join(f"{x:.3f}" for x in p), "mean", f"{statistics.mean(p):.3f}",
        "tok/s mean", round(statistics.mean(t)), "transfer share mean", f"{statistics.mean(s):.3f}")
for rep in (1, 2):
  for m in modes:
    try:
      for b in json.load(open(f"{R}/d2h_{m}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "").replace("BM_D2H/", "")
        x = f'{b["GBps_median"]:.1f}'
        if "scatter_GBps" in b: x += f' (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f})'
        if "rows_streamed" in b: x += f' streamed={int(b["rows_streamed"])}'
        print(rep, m, n, x)
    except Exception as e: print(rep, m, e)
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
grep -c "^\[       OK \]" $R/gpu_tests.log; tail -3 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
cat $R/summary.txt
