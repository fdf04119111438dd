#!/bin/bash
# Session 6, final call: main's final code — the whole GPU suite, model tests, memcheck, the merge
# before (base: ef4bc5b) and after (one PCIe round trip), hgca-decode poll vs callback.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
for i in 1 2; do
  for b in hgca_bench_layer_base hgca_bench_layer; do
    timeout 30 $B/$b --benchmark_filter=BM_MergeZeroCopy --benchmark_format=json --benchmark_out=$R/merge_${b}_$i.json > /dev/null 2>&1
  done
done
timeout 60 $B/hgca_bench_gpu --benchmark_filter=WindowDecode --benchmark_out=$R/window.json --benchmark_out_format=json > $R/window.log 2>&1; echo "window rc=$?"
timeout 60 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py main=$R/window.json sdpa=$R/sdpa.json > $R/window_table.txt 2>&1
timeout 330 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 100 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='*HostCalls*:CudaHandoff*:CudaGraph.*:CudaAsync.*:*MergeKernel*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
for i in 1 2; do
  for h in poll callback; do timeout 20 $B/hgca-decode --json --handoff $h 2>/dev/null; done
done > $R/decode.json
python3 - $R <<'PY'
import json,sys,glob
R=sys.argv[1]
for f in sorted(glob.glob(f"{R}/merge_*.json")):
    for b in json.load(open(f))["benchmarks"]:
        if b.get("aggregate_name")=="median": print(f.split("/")[-1], "median us", round(b["real_time"],2))
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j=json.loads(line); print("decode", j["handoff"], "p50", round(j["tbt_ms_p50"],3), "p99", round(j["tbt_ms_p99"],3), "tok/s", round(j["tokens_per_s"]))
PY
cat $R/window_table.txt | head -40
(cd $OUT && tar czf results.tgz r && rm -rf r)
echo done
