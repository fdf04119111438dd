#!/bin/bash
# Session 35, call 5: the host's time before FlashH2D's first launch. bin/c0: b1 of call 4 (first
# launch 128 spans, the 32 KB parameter block); c1: the first launch a kernel of its own with 64
# spans (1.5 KB of parameters); c2: c1 setting the kernels' shared-memory attribute only once per
# process (a measurement hack). Each with HGCA_BENCH_PREROLL=0 and 1, 3 rounds, 16 KB.
CALL=${CALL:-call5}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in c0 c1 c2; do for p in 0 1; do
    HGCA_BENCH_PREROLL=$p timeout 40 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|x_bulk)/block_KB:16/SMs:(4|8)/|BM_H2D/memcpy_contiguous/' \
      --benchmark_format=json --benchmark_out=$R/$v-p$p-r$r.json > /dev/null 2> $R/$v-p$p-r$r.err || echo "$v p$p round $r failed"
  done; done
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    v = f.split("/")[-1].rsplit("-r", 1)[0]
    for b in json.load(open(f)).get("benchmarks", []):
        n = v + " " + b["name"].split("/iterations")[0]
        rows.setdefault(n, []).append("%.1f/%.2fms" % (b["GBps_median"], b["host_ms_median"]) if "GBps_median" in b else b.get("error_message", "?"))
for n, v in sorted(rows.items()): print(f"{n:<44}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
