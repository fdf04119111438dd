#!/bin/bash
# Session 12, call 5: the window decode kernel's cp.async with the L2::256B prefetch-size hint
# (hgca_bench_gpu_256) against main's (hgca_bench_gpu_main), alternated, 4 rounds, batch 16, Hkv 8
# and 4, W 4096 and 16384; then PyTorch SDPA on the same shapes.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
# (hgca_bench_gpu_main: 00e51d5's tree; hgca_bench_gpu_256: the same with ".L2::256B" added to cp_async16's
# cp.async in src/gpu/window_attention_decode.cuh.)
B=$D/bin; R=$OUT; mkdir -p $R
F='WindowDecode/batch:16/hkv:(8|4)/window:(4096|16384)'
for r in 1 2 3 4; do for v in main 256; do
  timeout 30 $B/hgca_bench_gpu_$v --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 60 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys, tarfile
R = sys.argv[1]; t = tarfile.open(f"{R}/json.tgz")
rows = {}
for r in (1, 2, 3, 4):
  for v in ("main", "256"):
    for b in json.load(t.extractfile(f"{v}_{r}.json"))["benchmarks"]:
      n = b["name"].split("/iter")[0].split("/manual")[0].replace("BM_WindowDecode/", "")
      rows.setdefault(n, {})[(v, r)] = b["real_time"]
sd = {}
try:
  for x in json.load(t.extractfile("sdpa.json"))["results"]: sd[(x["batch"], x["hkv"], x["window"])] = x["us"]
except Exception as e: print("sdpa", e)
unit = "us"
print("time per call (us); main1 256_1 ... ; SDPA")
for n, d in rows.items():
  k = dict(p.split(":") for p in n.split("/") if ":" in p)
  s = sd.get((int(k["batch"]), int(k["hkv"]), int(k["window"])), float("nan"))
  cells = " ".join(f'{d.get((v, r), float("nan")):7.1f}' for r in (1, 2, 3, 4) for v in ("main", "256"))
  print(f"{n:34s} {cells}  sdpa {s:7.1f}")
PY
