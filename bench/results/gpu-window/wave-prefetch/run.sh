#!/bin/bash
# Session 7, call 1: L2 prefetch of the next wave's first K rows in the cluster path
# (HGCA_EXP_PREFETCH_KEYS = 0 | 128 | 256 | 512), interleaved; SDPA at the goal shape; window tests.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/machine.txt
F='BM_WindowDecode/batch:(16|64)/hkv:(8|32|4)/window:(4096|16384)/'
for round in 1 2; do
  for k in 0 256 128 512; do
    HGCA_EXP_PREFETCH_KEYS=$k timeout 60 $B/hgca_bench_gpu --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_${k}_$round.json > /dev/null 2>&1
    echo "pf=$k round=$round rc=$?"
  done
done
timeout 90 python3 - > $R/sdpa.json 2> $R/sdpa.log <<'PY'
import importlib.util, json
spec = importlib.util.spec_from_file_location("t", ".device/torch_sdpa_window.py"); t = importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
out = [t.bench(b, h, w) for (b, h, w) in [(16, 8, 16384), (16, 4, 16384), (64, 8, 16384), (16, 8, 16384)]]
print(json.dumps(out))
PY
echo "sdpa rc=$?"
timeout 200 $B/hgca_gpu_tests --gtest_filter='*Window*:*Decode*:*Cluster*' > $R/tests.log 2>&1; echo "tests rc=$?"; grep -E "PASSED|FAILED|tests ran" $R/tests.log | head
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/w_*.json")):
    k, rnd = f.split("/")[-1][2:-5].split("_")
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].replace("BM_WindowDecode/", "").replace("/manual_time", "")
        t[n][f"{k}/{rnd}"] = (round(b["us"], 1), int(b["cluster"]))
cols = [f"{k}/{r}" for k in ("0", "128", "256", "512") for r in ("1", "2")]
print("shape | " + " ".join(cols))
for n, d in t.items():
    print(n, "|", " ".join(str(d.get(c, ("-",))[0]) for c in cols), "cl" if d.get("0/1", (0, 0))[1] else "sc")
for r in json.load(open(f"{R}/sdpa.json")): print("sdpa", r["batch"], r["hkv"], r["window"], round(r["us"], 1))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
