#!/bin/bash
# Session 35, call 3: does FlashH2D (v2 of call 1) lose its ~1 GB/s to x_bulk per launch? v2 built
# with 1360 (bin/s1360, as it is), 680 and 340 spans per launch; the benchmark also records the
# host's time in each call (host_ms_median). 3 rounds, 16 and 64 KB, the binaries alternating.
CALL=${CALL:-call3}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in s1360 s680 s340; do
    timeout 40 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_contiguous)/block_KB:(16|64)/|BM_H2D/x_bulk/block_KB:(16|64)/SMs:(4|8)/' \
      --benchmark_format=json --benchmark_out=$R/$v-r$r.json > /dev/null 2> $R/$v-r$r.err || echo "$v round $r failed"
  done
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    v = f.split("/")[-1].split("-r")[0]
    for b in json.load(open(f)).get("benchmarks", []):
        n = v + " " + b["name"].split("/iterations")[0]
        rows.setdefault(n, []).append("%.1f/%.2fms" % (b["GBps_median"], b["host_ms_median"]) if "GBps_median" in b else b.get("error_message", "?"))
for n, v in sorted(rows.items()): print(f"{n:<44}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
