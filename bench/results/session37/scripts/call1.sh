#!/bin/bash
# Session 37, call 1: the AMX-BF16 score path (isa 5, "amx") on the GPU machine's Xeon, beside the
# AVX-512 paths in the same process. Binaries: bin/ = this session's build (the AMX path, L1
# prefetch of stream blocks). The ISA tests against the fp64 reference; the engine on 1 and all 16
# threads with a 4 GiB working set (DRAM) and with 32 MiB (from L3: the compute's ceiling), 2 rounds;
# per-head lengths 1-30 %; PyTorch's CPU SDPA before and after; hgca-tune's sweep (which now includes
# amx for bf16).
CALL=${CALL:-call1}; source bench/results/session37/scripts/common.sh
grep -o -w 'amx[a-z_0-9]*\|avx512_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ' >> $R/machine.txt; echo >> $R/machine.txt
[ -z "$SKIP_TESTS" ] && timeout 120 $D/bin/hgca_tests --gtest_filter='*SparseEngineIsa*:*KeyWeightsIsa*:SparseEngine.*' > $R/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/tests.txt | tr '\n' ' ') skipped: $(grep -c SKIPPED $R/tests.txt)"
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
for r in 1 2; do
  HGCA_BENCH_WS_MB=4096 timeout 150 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:(1|0)/isa:(5|4|1)/|BM_DecodeVaried/' \
    --benchmark_format=json --benchmark_out=$R/dram-r$r.json > /dev/null 2> $R/dram-r$r.err || echo "dram round $r failed"
  HGCA_BENCH_WS_MB=32 timeout 60 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:1/isa:(5|4|1)/' \
    --benchmark_format=json --benchmark_out=$R/cache-r$r.json > /dev/null 2> $R/cache-r$r.err || echo "cache round $r failed"
done
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
if [ -z "$SKIP_TUNE" ]; then t0=$(date +%s)
timeout 200 $D/bin/hgca-tune --out $R/hgca-config.json --svg $R/hgca-tune.svg > $R/hgca-tune.txt 2> $R/hgca-tune.err || echo "hgca-tune failed"
echo "hgca-tune $(( $(date +%s) - t0 )) s"; fi
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
R = sys.argv[1]
torch = {}
for p in sorted(glob.glob(f"{R}/torch-*.json")):
    try:
        for dt, x in json.load(open(p))["results"].items(): torch.setdefault(dt, []).append(x["GBps_median"])
    except Exception as e: print("peer", p, e)
print("PyTorch CPU SDPA GB/s:", {k: [round(v, 1) for v in vs] for k, vs in torch.items()})
for kind in ("dram", "cache"):
    rows = {}
    for p in sorted(glob.glob(f"{R}/{kind}-r*.json")):
        for x in json.load(open(p))["benchmarks"]:
            rows.setdefault(x["name"].split("/min_time")[0], []).append(x)
    print(f"{kind:<6}{'benchmark':<40} {'engine GB/s':>12} {'read GB/s':>10} {'x torch':>10} {'max/mean':>12}")
    for n, xs in rows.items():
        dt = "bf16" if "dtype:2" in n else "fp16"
        t = max(torch.get(dt, [float("nan")]))
        e = " ".join("%.1f" % x["engine_GBps"] for x in xs)
        rd = " ".join("%.0f" % x["dram_read_GBps"] for x in xs)
        ratio = " ".join("%.2f" % (x["engine_GBps"] / t) for x in xs)
        bal = " ".join("%.3f" % x.get("busy_max_over_mean", 0) for x in xs)
        print(f"      {n:<40} {e:>12} {rd:>10} {ratio:>10} {bal:>12}")
PY
[ -f $CALL/hgca-tune.txt ] && tail -25 $CALL/hgca-tune.txt
cat $CALL/machine.txt; rm -rf $CALL
