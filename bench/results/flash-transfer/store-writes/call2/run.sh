#!/bin/bash
# Session 11, call 2: ScatterLanes chaining (the thread that ends a lane's scatter runs the next one)
# against a86c7bf (base: the caller wakes, then enqueues it), alternated, two rounds, rows streamed
# (HGCA_BENCH_STORE_WRITES=streamed) and auto. GPU and model tests and hgca-decode's default run
# (auto against --store-writes cached) with the new library.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
F='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:(1|2)/|BM_D2H/flash_store_steady/block_KB:(16|64)/slots:4/threads:0/selected_pct:(10|50)/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:(16|64)/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2; do for v in base new; do for m in streamed auto; do
  b=$B/hgca_bench_transfer; [ $v = base ] && b=${b}_base
  HGCA_BENCH_STORE_WRITES=$m timeout 120 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${v}_${m}_$rep.json > /dev/null 2>&1; echo "d2h $v $m $rep rc=$?"
done; done; done
for rep in 1 2 3 4; do for m in auto cached; do
  timeout 30 $B/hgca-decode --json --store-writes $m 2>/dev/null > $R/decode_${m}_$rep.json || echo "decode $m $rep failed"
done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys, statistics
R = sys.argv[1]
for m in ("auto", "cached"):
  p = [json.load(open(f"{R}/decode_{m}_{r}.json"))["tbt_ms_p50"] for r in (1, 2, 3, 4)]
  t = [json.load(open(f"{R}/decode_{m}_{r}.json"))["tokens_per_s"] for r in (1, 2, 3, 4)]
  s = [json.load(open(f"{R}/decode_{m}_{r}.json"))["transfer_share"] for r in (1, 2, 3, 4)]
  print("decode", m, "p50", " ".join(f"{x:.3f}" for x in p), "mean", f"{statistics.mean(p):.3f}",
        "tok/s mean", round(statistics.mean(t)), "transfer share mean", f"{statistics.mean(s):.3f}")
rows = {}
for rep in (1, 2):
  for v in ("base", "new"):
    for m in ("streamed", "auto"):
      try:
        for b in json.load(open(f"{R}/d2h_{v}_{m}_{rep}.json"))["benchmarks"]:
          n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "").replace("BM_D2H/", "")
          x = f'{b["GBps_median"]:.1f}'
          if "scatter_GBps" in b: x += f' ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.1f})'
          rows.setdefault((m, n), {})[(v, rep)] = x
      except Exception as e: print(v, m, rep, e)
cols = [(v, r) for r in (1, 2) for v in ("base", "new")]
print("mode/benchmark".ljust(80), "  ".join(f"{v}{r}".rjust(16) for v, r in cols))
for (m, n), d in rows.items():
  print(f"{m} {n}".ljust(80), "  ".join(d.get(c, "-").rjust(16) for c in cols))
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
grep -c "^\[       OK \]" $R/gpu_tests.log; tail -3 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
cat $R/summary.txt
