#!/bin/bash
# Session 35, call 4: is FlashH2D's gap to x_bulk the host's time before the first launch? bin/b0:
# v2 of call 1; bin/b1: v2 whose first launch carries 128 spans (the GPU starts sooner). Each
# with HGCA_BENCH_PREROLL=0 and 1 (1: a ~1 ms kernel before the start event, so the whole call is
# enqueued before the GPU starts it). 3 rounds, 16 KB, the runs alternating.
CALL=${CALL:-call4}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in b0 b1; do for p in 0 1; do
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
