#!/bin/bash
# Session 7, call 2: the stream path. Correctness (window tests, the stream forced where feasible
# and by the model), the sweep: main (base) vs this build with the stream off / forced / by model.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
HGCA_EXP_STREAM=1 timeout 150 $B/hgca_gpu_tests --gtest_filter='WindowAttention*:*WindowAttentionSweep*' > $R/tests_forced.log 2>&1; echo "tests forced rc=$?"; grep -E "^\[  FAILED|PASSED|tests ran" $R/tests_forced.log | head
timeout 60 $B/hgca_gpu_tests --gtest_filter='WindowAttention.Stream*:WindowAttention.Planner*' > $R/tests_model.log 2>&1; echo "tests model rc=$?"; grep -E "^\[  FAILED|PASSED|Failure|Expected|actual|Which" $R/tests_model.log | head -12
for round in 1 2; do
  timeout 80 $B/hgca_bench_gpu_base --benchmark_filter=WindowDecode --benchmark_format=json --benchmark_out=$R/w_base_$round.json > /dev/null 2>&1; echo "base rc=$?"
  for m in 0 1 auto; do
    if [ $m = auto ]; then unset HGCA_EXP_STREAM; else export HGCA_EXP_STREAM=$m; fi
    timeout 80 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_format=json --benchmark_out=$R/w_${m}_$round.json > /dev/null 2>&1; echo "$m rc=$?"
  done
  unset HGCA_EXP_STREAM
done
timeout 90 python3 - > $R/sdpa.json 2> $R/sdpa.log <<'PY'
import importlib.util, json
spec = importlib.util.spec_from_file_location("t", ".device/torch_sdpa_window.py"); t = importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
print(json.dumps([t.bench(16, 8, 16384) for _ in range(3)] + [t.bench(16, 4, 16384), t.bench(16, 4, 4096)]))
PY
echo "sdpa rc=$?"
python3 - $R <<'PY'
import json, sys, glob, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/w_*.json")):
    k, rnd = f.split("/")[-1][2:-5].split("_")
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].replace("BM_WindowDecode/", "").replace("/manual_time", "").replace("/iterations:30","")
        t[n][f"{k}{rnd}"] = round(b["us"], 1)
cols = [f"{k}{r}" for k in ("base", "0", "1", "auto") for r in ("1", "2")]
print("shape | " + " ".join(cols))
for n, d in t.items(): print(n, "|", " ".join(str(d.get(c, "-")) for c in cols))
for r in json.load(open(f"{R}/sdpa.json")): print("sdpa", r["batch"], r["hkv"], r["window"], round(r["us"], 1))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
