#!/bin/bash
# Session 7, final call: main (src as e44420c, bench with the merge floor probes and the queued
# merge): whole GPU suite, model tests, racecheck of the cluster kernel's tests, the merge
# benchmarks, the goal shape against SDPA alternating three times, hgca-decode.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv > $R/machine.txt
timeout 300 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -8
timeout 40 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -3
RF='All/WindowAttentionSweep.DecodeRaggedWrapped/bf16_G*_D128:All/WindowAttentionSweep.DecodeRaggedWrapped/f16_G4_D64:All/WindowAttentionSweep.DecodeRaggedWrapped/bf16_G8_D256:All/WindowAttentionSweep.DecodeRaggedWrapped/f16_G2_D256'
timeout 220 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter="$RF" > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|hazard|PASSED|FAILED|tests ran" $R/racecheck.log | head -6
timeout 120 $B/hgca_bench_layer --benchmark_filter=Merge --benchmark_format=json --benchmark_out=$R/merge.json > /dev/null 2>&1; echo "merge rc=$?"
for i in 1 2 3; do
  timeout 30 $B/hgca_bench_gpu --benchmark_filter='BM_WindowDecode/batch:16/hkv:8/window:16384/' --benchmark_format=json --benchmark_out=$R/goal_$i.json > /dev/null 2>&1
  timeout 60 python3 - > $R/sdpa_$i.json 2>> $R/sdpa.log <<'PY'
import importlib.util, json
spec = importlib.util.spec_from_file_location("t", ".device/torch_sdpa_window.py"); t = importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
print(json.dumps(t.bench(16, 8, 16384)))
PY
done
for i in 1 2; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
python3 - $R <<'PY'
import json, sys, glob
R = sys.argv[1]
for b in json.load(open(f"{R}/merge.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median" and "ZeroCopy" in b["name"]: print(b["name"], "median us", round(b["real_time"], 2))
for i in (1, 2, 3):
    h = [b for b in json.load(open(f"{R}/goal_{i}.json"))["benchmarks"]][0]["us"]
    s = json.load(open(f"{R}/sdpa_{i}.json"))["us"]
    print(f"goal shape round {i}: hgca {h:.1f} us, sdpa {s:.1f} us, sdpa/hgca {s/h:.3f}")
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j = json.loads(line); print("decode", j.get("handoff"), "p50", round(j["tbt_ms_p50"], 3), "tok/s", round(j["tokens_per_s"]))
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
