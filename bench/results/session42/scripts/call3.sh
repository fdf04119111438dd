#!/bin/bash
# Session 42, call 3: FlashD2H and FlashH2D before (eeaf168, hwloc_alloc_membind) and after
# (c333aa7, 2 MiB-aligned mmap + hwloc_set_area_membind) node_alloc's change, on one host, three
# rounds in alternating order: grown (steady) and fresh stores, 4 and 16 layers, and the H2D gather.
CALL=${CALL:-call3}; source bench/results/session42/scripts/common.sh
S='BM_D2H/flash_store(_steady)?/block_KB:16/slots:(8|16)/threads:0/selected_pct:10/layers:(4|16)/laps:4/|BM_H2D/flash/block_KB:16/SMs:8/'
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for v in $order; do
    bin=$D/bin/hgca_bench_transfer; [ $v = before ] && bin=$D/bin/before/hgca_bench_transfer
    timeout 90 $bin --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/$v-r$r.json > /dev/null 2> $R/$v-r$r.err || echo "$v r$r failed"
  done
done
python3 - $R <<'PY'
import json, sys, statistics
d = sys.argv[1]
rows = {}
for v in ("before", "after"):
    for r in (1, 2, 3):
        for b in json.load(open(f"{d}/{v}-r{r}.json"))["benchmarks"]:
            rows.setdefault(b["name"].split("/iterations")[0], {}).setdefault(v, []).append(b["bytes_per_second"] / 1e9)
for name, by in rows.items():
    cells = "  ".join(f"{v} {' '.join(f'{x:5.1f}' for x in by[v])} (med {statistics.median(by[v]):5.1f})" for v in ("before", "after"))
    print(f"{name:88s} {cells}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
