#!/bin/bash
# Session 35, call 6: main's FlashH2D kernel (bin/d0: 1024 threads of 16-byte loads per SM) against
# c1 of call 5 (bin/d1: the TMA ring, first launch 64 spans), each with HGCA_BENCH_PREROLL=0 and 1,
# 3 rounds, 16 KB; then the host's time in one call of 1, 64, 65, 1424 and 16384 spans
# (BM_H2DHost, GPU idle).
CALL=${CALL:-call6}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in d0 d1; do for p in 0 1; do
    HGCA_BENCH_PREROLL=$p timeout 40 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|x_bulk)/block_KB:16/SMs:(4|8)/|BM_H2D/memcpy_contiguous/|BM_H2DHost' \
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
        rows.setdefault(n, []).append("%.1f/%.2fms" % (b["GBps_median"], b["host_ms_median"]) if "GBps_median" in b else "%.1fus" % b["host_us_median"] if "host_us_median" in b else b.get("error_message", "?"))
for n, v in sorted(rows.items()): print(f"{n:<44}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
