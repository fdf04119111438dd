#!/bin/bash
# Session 12, call 8: the decode kernel's K/V pipeline with 5 and 6 tile stages at D 128 (s5, s6;
# main: 4), the whole WindowDecode sweep of each, alternated, 3 rounds; then PyTorch SDPA.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
# (hgca_bench_gpu_main: 00e51d5; s5 / s6: the same with tile_stages(128) returning 5 / 6 in
# src/gpu/window_attention_decode.cuh.)
B=$D/bin; R=$OUT; mkdir -p $R
for r in 1 2 3; do for v in main s5 s6; do
  timeout 60 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 60 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys, tarfile, statistics
R = sys.argv[1]; t = tarfile.open(f"{R}/json.tgz")
rows = {}; V = ("main", "s5", "s6")
for r in (1, 2, 3):
  for v in V:
    try:
      for b in json.load(t.extractfile(f"{v}_{r}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].split("/manual")[0].replace("BM_WindowDecode/", "")
        rows.setdefault(n, {}).setdefault(v, []).append(b["real_time"])
    except Exception as e: print(v, r, e)
sd = {}
try:
  for x in json.load(t.extractfile("sdpa.json"))["results"]: sd[(x["batch"], x["hkv"], x["window"])] = x["us"]
except Exception as e: print("sdpa", e)
print(f'{"shape":32s} {"main (3 rounds)":>22s} {"s5":>22s} {"s6":>22s} {"sdpa":>7s}  best/main  main:sdpa best:sdpa')
for n, d in rows.items():
  k = dict(p.split(":") for p in n.split("/") if ":" in p)
  s = sd.get((int(k["batch"]), int(k["hkv"]), int(k["window"])), float("nan"))
  med = {v: statistics.median(d[v]) for v in V if v in d}
  best = min(med, key=med.get)
  cells = " ".join(" ".join(f"{x:6.1f}" for x in d.get(v, [])).rjust(22) for v in V)
  print(f"{n:32s} {cells} {s:7.1f}  {best:4s} {med['main']/med[best]:.3f}  {s/med['main']:.3f} {s/med[best]:.3f}")
PY
