#!/bin/bash
# Session 9: FlashD2H into the stores with the host windows kept in store blocks (MirroredKv:
# evicted blocks handed over, each row copied once), head-major and row-major fills, against the
# base (703a2b7: host window ring, rows copied into blocks at eviction); the pool scatter as the
# engine's reference in the same run; hgca-decode's default.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in headmajor rowmajor base; do
  s=$B/hgca_bench_store; t=$B/hgca_bench_transfer; [ $v != headmajor ] && s=${s}_$v && t=${t}_$v
  timeout 120 $t --benchmark_filter='BM_D2H/flash_store/block_KB:(4|16|64)/slots:(2|3|4)/|BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json --benchmark_out=$R/d2h_$v.json > /dev/null 2>&1; echo "d2h $v rc=$?"
  timeout 60 $s --benchmark_filter='BM_Scatter/(store|pool)/block_KB:16/threads:(1|16)/' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$R/store_$v.json > /dev/null 2>&1; echo "store $v rc=$?"
done
for i in 1 2; do timeout 20 $B/hgca-decode --json 2>/dev/null; done > $R/decode.json
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for v in ("headmajor", "rowmajor", "base"):
    for b in json.load(open(f"{R}/d2h_{v}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "")
        print(v, n, f'{b["GBps_median"]:.1f} GB/s (copy {b["copy_GBps"]:.1f}, scatter {b["scatter_GBps"]:.1f}, sel {b.get("selected_fraction", 0):.3f})')
    for b in json.load(open(f"{R}/store_{v}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median": print(v, b["run_name"], f'{b["bytes_per_second"] / 1e9:.1f} GB/s')
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j = json.loads(line); print("decode p50", round(j["tbt_ms_p50"], 3), "tok/s", round(j["tokens_per_s"]))
PY
cp -r $R/* $OUT/ && rm -rf $R
