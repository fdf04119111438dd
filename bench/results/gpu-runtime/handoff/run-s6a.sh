#!/bin/bash
# Session 6, call 1: HostCalls (stream memory operations + polling thread) — GPU tests, memcheck,
# hgca-decode poll vs callback interleaved, the hybrid layer with both hand-offs.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt; nproc >> $R/machine.txt
timeout 60 $B/hgca_gpu_tests --gtest_filter='*HostCalls*:CudaHandoff*:CudaGraph.*:CudaAsync.*' > $R/gpu_first.log 2>&1; echo "first rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_first.log | head -12
for i in 1 2 3; do
  for h in poll callback; do timeout 20 $B/hgca-decode --json --handoff $h 2>/dev/null; done
done > $R/decode.json
for i in 1 2; do
  for h in poll callback; do timeout 20 $B/hgca-decode --json --handoff $h --threads 8 2>/dev/null; done
done > $R/decode_t8.json
timeout 120 $B/hgca_bench_layer --benchmark_format=json --benchmark_out=$R/layer.json > $R/layer.log 2>&1; echo "layer rc=$?"
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 90 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*HostCalls*:CudaHandoff*:CudaGraph.*:CudaAsync.*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
for f in ("decode.json","decode_t8.json"):
    for line in open(f"{R}/{f}"):
        line=line.strip()
        if not line.startswith("{"): continue
        j=json.loads(line); t=j["tbt_ms"]
        print(f, j["handoff"], "p50", round(j["tbt_ms_p50"],3), "p99", round(j["tbt_ms_p99"],3), "max", round(max(t),3) if isinstance(t,list) else t, "tok/s", round(j["tokens_per_s"]), "xfer", round(j["transfer_share"],3))
try:
    for b in json.load(open(f"{R}/layer.json"))["benchmarks"]:
        print(b["name"], round(b["real_time"],3), b.get("handoff_poll"))
except Exception as e: print("layer", e)
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
echo done
