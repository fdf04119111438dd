#!/bin/bash
# Session 7, call 3: the stream path with its finish reworked (records and weights in shared memory).
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
for t in StreamPathFullWindows StreamPathRaggedWrappedManySequences; do
  HGCA_EXP_STREAM=1 timeout 40 $B/hgca_gpu_tests --gtest_filter="WindowAttention.$t" > $R/test_$t.log 2>&1; echo "$t rc=$?"
  grep -E "Failure|Expected|actual|Which|max err|OK \]|FAILED  \]" $R/test_$t.log | head -8
done
F='BM_WindowDecode/batch:(16|64)/'
for round in 1 2; do
  timeout 60 $B/hgca_bench_gpu_base --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_base_$round.json > /dev/null 2>&1; echo "base rc=$?"
  HGCA_EXP_STREAM=1 timeout 60 $B/hgca_bench_gpu --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/w_1_$round.json > /dev/null 2>&1; echo "stream rc=$?"
done
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/w_*.json")):
    k, rnd = f.split("/")[-1][2:-5].split("_")
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].replace("BM_WindowDecode/", "").replace("/manual_time", "").replace("/iterations:30","")
        t[n][f"{k}{rnd}"] = round(b["us"], 1)
for n, d in t.items(): print(n, "|", d.get("base1"), d.get("base2"), "|", d.get("11"), d.get("12"), "|", round((d.get("11",0)+d.get("12",0))/(d.get("base1",1)+d.get("base2",1)),3))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
