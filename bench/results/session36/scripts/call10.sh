#!/bin/bash
# Session 36, call 10 (issue 4 on the library as committed, bin/d1; session 34 call 2's commands):
# the CPU engine on all 16 threads, every ISA path, bf16 and fp16, and with per-head selected
# lengths varied (1-30 %), a 4 GiB working set, 2 rounds; PyTorch's CPU SDPA over the same
# selected subset in the same call, before and after; hgca-tune's full sweep with its table, best
# configuration and plot.
CALL=${CALL:-call10}; source bench/results/session36/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
for r in 1 2; do
  timeout 120 $D/bin/d1/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried/' \
    --benchmark_format=json --benchmark_out=$R/engine-r$r.json > /dev/null 2> $R/engine-r$r.err || echo "engine round $r failed"
done
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
if [ -z "$SKIP_TUNE" ]; then  # call 5 runs the rest again without it
t0=$(date +%s)
timeout 200 $D/bin/d1/hgca-tune --out $R/hgca-config.json --svg $R/hgca-tune.svg > $R/hgca-tune.txt 2> $R/hgca-tune.err || echo "hgca-tune failed"
echo "hgca-tune $(( $(date +%s) - t0 )) s"
fi
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
rows = {}
for p in sorted(glob.glob(f"{R}/engine-r*.json")):
    for x in json.load(open(p))["benchmarks"]:
        rows.setdefault(x["name"].split("/min_time")[0], []).append(x)
print(f"{'benchmark':<40} {'engine GB/s':>12} {'read GB/s':>10} {'x torch':>10} {'max/mean':>10}")
for n, xs in rows.items():
    dt = "bf16" if "dtype:2" in n else "fp16"
    t = max(torch.get(dt, [float("nan")]))  # against the peer's faster run
    e = " ".join("%.1f" % x["engine_GBps"] for x in xs)
    rd = " ".join("%.0f" % x["dram_read_GBps"] for x in xs)
    ratio = " ".join("%.2f" % (x["engine_GBps"] / t) for x in xs)
    bal = " ".join("%.3f" % x.get("busy_max_over_mean", 0) for x in xs)
    print(f"{n:<40} {e:>12} {rd:>10} {ratio:>10} {bal:>10}")
PY
[ -f $CALL/hgca-tune.txt ] && tail -25 $CALL/hgca-tune.txt
cat $CALL/machine.txt; rm -rf $CALL
