#!/bin/bash
# Session 35, call 2: when a FlashH2D launch lets its successor start (programmatic dependent
# launch). v2 of call 1 (experiments/flash-h2d-bulk-v2.patch) built four times, a CTA triggering
# its dependents when AHEAD pieces are left to load: bin/a0 (v2 as it is: at the last load),
# a6 (one ring ahead), a24, a100000 (at its first load). Each binary also has the benchmark-only
# gather (BM_H2D/x_bulk, one launch). 3 rounds, 16 and 64 KB, the binaries alternating.
CALL=${CALL:-call2}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in a0 a6 a24 a100000; do
    timeout 40 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(x_bulk|flash|memcpy_contiguous)/block_KB:(16|64)/' \
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
        rows.setdefault(n, []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else b.get("error_message", "?"))
for n, v in sorted(rows.items()): print(f"{n:<44}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
