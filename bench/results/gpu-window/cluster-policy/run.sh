#!/bin/bash
# Session 7: the cluster launch's scheduling policy preference (HGCA_EXP_POLICY unset / 0 default / 1 spread / 2 load balancing).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
F='BM_WindowDecode/batch:(16|64)/hkv:(8|32|4)/window:(4096|16384)/'
for round in 1 2; do
  for pol in unset 1 2; do
    if [ $pol = unset ]; then unset HGCA_EXP_POLICY; else export HGCA_EXP_POLICY=$pol; fi
    timeout 60 $B/hgca_bench_gpu --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_${pol}_$round.json > /dev/null 2>&1; echo "$pol rc=$?"
  done
done
unset HGCA_EXP_POLICY
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/w_*.json")):
    k, rnd = f.split("/")[-1][2:-5].split("_")
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].replace("BM_WindowDecode/", "").replace("/manual_time", "").replace("/iterations:30","")
        t[n][f"{k}{rnd}"] = (round(b["us"], 1), int(b["cluster"]))
cols = [f"{k}{r}" for k in ("unset", "1", "2") for r in ("1", "2")]
print("shape | " + " ".join(cols))
for n, d in t.items(): print(n, "|", " ".join(str(d.get(c, ("-",))[0]) for c in cols), "cl" if d["unset1"][1] else "sc")
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
