#!/bin/bash
# Session 12, call 6 (final library, c = this commit): GPU and model tests; memcheck of the
# transfer tests; FlashH2D against main's (bt_base = 98233bb) alternated, 3 rounds; the merge gated
# and on an idle stream; hgca-decode's default run before (98233bb) and after, alternated, 5 each;
# FlashD2H into grown stores with its peers.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
timeout 240 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
timeout 60 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "model rc=$?"; tail -1 $R/gpu_model_tests.log
timeout 120 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='FlashH2D*:Lists/FlashH2DSpans*:Cases/FlashRoundTrip*:CudaGraph*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $R/memcheck.log
F='BM_H2D/(flash/block_KB:(4|16|64)/SMs:8|memcpy_batch/|memcpy_per_block/block_KB:16)'
for rep in 1 2 3; do for v in base new; do
  b=$B/hgca_bench_transfer; [ $v = base ] && b=$B/bt_base
  timeout 120 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/h2d_${v}_$rep.json > /dev/null 2>&1 || echo "h2d $v $rep failed"
done; done
for p in 1 2; do timeout 60 $B/hgca_bench_layer --benchmark_filter='BM_Merge(ZeroCopy|FloorEmpty)' --benchmark_format=json --benchmark_out=$R/merge_$p.json > /dev/null 2>&1 || echo "merge $p failed"; done
for rep in 1 2 3 4 5; do
  timeout 30 $B/hgca-decode_before --json 2>/dev/null > $R/decode_before_$rep.json || echo "decode before $rep failed"
  timeout 30 $B/hgca-decode --json 2>/dev/null > $R/decode_after_$rep.json || echo "decode after $rep failed"
done
timeout 150 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:1/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/' --benchmark_format=json --benchmark_out=$R/d2h.json > /dev/null 2>&1 || echo "d2h failed"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys, tarfile, statistics
R = sys.argv[1]; t = tarfile.open(f"{R}/json.tgz")
def load(n):
  try: return json.load(t.extractfile(n))
  except Exception as e: print(n, e); return {"benchmarks": []}
rows = {}
for rep in (1, 2, 3):
  for v in ("base", "new"):
    for b in load(f"h2d_{v}_{rep}.json")["benchmarks"]:
      rows.setdefault(b["name"].split("/iter")[0].replace("BM_H2D/", ""), {})[(v, rep)] = b["GBps_median"]
cols = [(v, r) for r in (1, 2, 3) for v in ("base", "new")]
print("H2D GB/s (median iteration):", " ".join(f"{v}{r}" for v, r in cols))
for n, d in rows.items(): print(f"  {n:36s}", " ".join(f'{d.get(c, float("nan")):6.1f}' for c in cols))
for p in (1, 2):
  for b in load(f"merge_{p}.json")["benchmarks"]:
    if b.get("aggregate_name") == "median": print(f"merge{p}", b["name"].split("/iter")[0], f'{b["real_time"]:.2f} us')
for v in ("before", "after"):
  d = [load(f"decode_{v}_{r}.json") for r in (1, 2, 3, 4, 5)]
  d = [x for x in d if "tbt_ms_p50" in x]
  if d: print("decode", v, "p50", " ".join(f'{x["tbt_ms_p50"]:.3f}' for x in d), "mean", f'{statistics.mean(x["tbt_ms_p50"] for x in d):.3f}',
              "p99 mean", f'{statistics.mean(x["tbt_ms_p99"] for x in d):.3f}', "tok/s mean", round(statistics.mean(x["tokens_per_s"] for x in d)),
              "transfer share mean", f'{statistics.mean(x["transfer_share"] for x in d):.3f}')
for b in load("d2h.json")["benchmarks"]:
  x = f'{b["GBps_median"]:.1f}'
  if "scatter_GBps" in b: x += f' (copy {b["copy_GBps"]:.1f} / scatter {b["scatter_GBps"]:.1f})'
  print("d2h", b["name"].split("/iter")[0].replace("BM_D2H/", ""), x)
PY
