#!/bin/bash
# Session 36, call 13: where FlashH2D's ~1 GB/s between "GPU idle at the call" and "_queued" goes.
# bin/x = 4cfd796 plus experiments/h2d-idle-modes.patch: HGCA_BENCH_H2D_MODE=warm keeps one SM
# spinning on another stream through the iterations (the GPU never idle), =tiny queues each gather
# behind a ~10 µs kernel; unset = as committed. 16 KB rows, 3 rounds, the modes alternating.
CALL=${CALL:-call13}; source bench/results/session36/scripts/common.sh
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for m in idle warm tiny; do
    HGCA_BENCH_H2D_MODE=$m timeout 60 $D/bin/x/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|flash_queued|memcpy_contiguous)/block_KB:16/' \
      --benchmark_format=json --benchmark_out=$R/$m-r$r.json > /dev/null 2> $R/$m-r$r.err || echo "$m round $r failed"
  done
done
cd $OUT && tar czf $CALL.tgz $CALL
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    m = f.split("/")[-1].rsplit("-r", 1)[0]
    for b in json.load(open(f)).get("benchmarks", []):
        rows.setdefault((b["name"].split("/iterations")[0].replace("block_KB:", ""), m), []).append("%.1f" % b["GBps_median"])
for (n, m), v in sorted(rows.items()): print(f"{n:<40} {m:<5}", *v)
PY
cat $CALL/machine.txt; rm -rf $CALL
