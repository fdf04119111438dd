#!/bin/bash
# Session 9, call 3: flash_store with the store's nested parallel loops (fill, make_room, selection)
# against the same loops serial inside each sequence's scatter, alternated; the GPU and model tests
# of the MirroredKv runtime; hgca-decode's default.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2; do for v in nested serial; do
  t=$B/hgca_bench_transfer; [ $v = serial ] && t=${t}_serial
  timeout 60 $t --benchmark_filter='BM_D2H/flash_store/block_KB:(16|64)/slots:4/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
for i in 1 2; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
timeout 360 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
tail -3 $R/gpu_tests.log; tail -3 $R/gpu_model_tests.log; grep "FAILED  \]" $R/*.log | head
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for rep in (1, 2):
  for v in ("nested", "serial"):
    for b in json.load(open(f"{R}/d2h_{v}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(rep, v, n, f'{b["GBps_median"]:.1f} GB/s (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f}, sel {b.get("selected_fraction", 0):.3f})')
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j = json.loads(line); print("decode p50", round(j["tbt_ms_p50"], 3), "tok/s", round(j["tokens_per_s"]), "transfer share", round(j["transfer_share"], 4), "decode_transfer_ms", round(j["decode_transfer_ms"], 3))
PY
