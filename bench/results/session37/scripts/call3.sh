#!/bin/bash
# Session 37, call 3: the L1 prefetch of stream blocks, before (bin/d0 = 673a998: t1, to L2) and
# after (bin/d1 = 673a998 + NextBlock::to_l1: t0 for blocks of <= 16 keys), alternating in one
# call: the engine on 1 and all 16 threads, 4 GiB (DRAM) and 32 MiB (from L3), AVX-512 paths,
# bf16 and fp16, 3 rounds each.
CALL=${CALL:-call3}; source bench/results/session37/scripts/common.sh
for r in 1 2 3; do
  for b in d0 d1; do
    HGCA_BENCH_WS_MB=4096 timeout 120 $D/bin/$b/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:(1|0)/isa:(4|1)/' \
      --benchmark_format=json --benchmark_out=$R/dram-$b-r$r.json > /dev/null 2> $R/dram-$b-r$r.err || echo "dram $b $r failed"
    HGCA_BENCH_WS_MB=32 timeout 60 $D/bin/$b/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:1/isa:(4|1)/' \
      --benchmark_format=json --benchmark_out=$R/cache-$b-r$r.json > /dev/null 2> $R/cache-$b-r$r.err || echo "cache $b $r failed"
  done
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob, statistics as st
R = sys.argv[1]
for kind in ("dram", "cache"):
    rows = {}
    for b in ("d0", "d1"):
        for p in sorted(glob.glob(f"{R}/{kind}-{b}-r*.json")):
            for x in json.load(open(p))["benchmarks"]:
                rows.setdefault(x["name"].split("/min_time")[0], {}).setdefault(b, []).append(x["engine_GBps"])
    print(f"{kind:<6}{'benchmark':<38} {'before (t1) GB/s':>20} {'after (t0) GB/s':>20} {'median ratio':>12}")
    for n, v in rows.items():
        a, b = v.get("d0", [0]), v.get("d1", [0])
        f = lambda xs: " ".join("%.1f" % x for x in xs)
        print(f"      {n:<38} {f(a):>20} {f(b):>20} {st.median(b) / st.median(a):>12.3f}")
PY
cat $CALL/machine.txt; rm -rf $CALL
