#!/bin/bash
# Session 7, call 4: where the stream path's time goes: stream phase alone (HGCA_EXP_FLAGS=1), half the blocks (HGCA_EXP_DIV=2).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
F='BM_WindowDecode/batch:(16/hkv:(8|4)/window:16384|64/hkv:32/window:1024|16/hkv:8/window:4096)/'
run() { name=$1; shift; env "$@" timeout 40 $B/hgca_bench_gpu --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_$name.json > /dev/null 2> $R/err_$name.log; echo "$name rc=$? $(head -1 $R/err_$name.log)"; }
timeout 40 $B/hgca_bench_gpu_base --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_base.json > /dev/null 2>&1
run stream HGCA_EXP_STREAM=1
run nofinish HGCA_EXP_STREAM=1 HGCA_EXP_FLAGS=1
run div2 HGCA_EXP_STREAM=1 HGCA_EXP_DIV=2
run div2nofinish HGCA_EXP_STREAM=1 HGCA_EXP_DIV=2 HGCA_EXP_FLAGS=1
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/w_*.json")):
    k = f.split("/")[-1][2:-5]
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].replace("BM_WindowDecode/", "").replace("/manual_time", "").replace("/iterations:30","")
        t[n][k] = round(b["us"], 1)
cols = ["base", "stream", "nofinish", "div2", "div2nofinish"]
print("shape | " + " ".join(cols))
for n, d in t.items(): print(n, "|", " ".join(str(d.get(c)) for c in cols))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
