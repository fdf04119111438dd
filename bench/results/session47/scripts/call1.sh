#!/bin/bash
# Session 47, call 1 (the commit in .device/commit, plus the uncommitted "_parts" rows; one H200):
# FlashD2H into grown stores at 1 and 2 layers with each layer's scatters in 1, 2, 4 (8) lanes that
# take a share of the sequences each, so that a layer's next scatter starts on a share as soon as that
# share is done (no barrier at the end of a step); the copy alone and the contiguous D2H copy for
# reference. 3 rounds (ROUNDS), medians.
CALL=${CALL:-call1}; source bench/results/session47/scripts/common.sh
for r in $(seq 1 ${ROUNDS:-3}); do
  timeout 170 $D/bin/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store_steady_parts/|BM_D2HContiguous/MiB:4' \
    --benchmark_format=json --benchmark_out=$R/d2h-r$r.json > /dev/null 2> $R/d2h-r$r.err; echo "d2h r$r rc=$?"
done
python3 - $R ${ROUNDS:-3} <<'PY' | tee $R/table.txt
import json, sys, collections
d = sys.argv[1]
rows = collections.OrderedDict(); meds = {}
for r in range(1, int(sys.argv[2]) + 1):
    try: bs = json.load(open(f"{d}/d2h-r{r}.json"))["benchmarks"]
    except Exception as e: print("missing", r, e); continue
    for b in bs:
        name = b['name'].split('/iterations')[0].replace('/manual_time', '')
        if 'error_occurred' in b: rows.setdefault(name, []).append('error: ' + b.get('error_message', '')); continue
        v = f"{b.get('GBps_median', float('nan')):.1f}"
        meds.setdefault(name, []).append(b.get('GBps_median', float('nan')))
        if 'scatter_GBps' in b: v += f" (copy {b['copy_GBps']:.1f}, scatter {b['scatter_GBps']:.1f})"
        rows.setdefault(name, []).append(v)
import statistics
for name, vs in rows.items(): print(f"{name:90s} | median {statistics.median(meds.get(name, [float('nan')])):.1f} | " + " | ".join(vs))
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
