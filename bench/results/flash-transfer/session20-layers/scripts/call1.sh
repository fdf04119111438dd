#!/bin/bash
# Session 20, call 1: main (base) against context-cache appends streamed (nt) and, on top, context
# caches that grow fourfold (nt4, not meant to land as is), alternated, warm guest.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call1; mkdir -p $R
nproc; lscpu | grep -E "Model name|L3"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/"
for r in 1 2 3 4; do for v in base nt nt4; do
  t0=$(date +%s)
  $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
  echo "$v r$r $(( $(date +%s) - t0 )) s"
done; done
python3 - $R <<'PY'
import json, sys, statistics as st
R=sys.argv[1]
for k in ("flash_store_steady","flash_store","flash_pool"):
  for v in ("base","nt","nt4"):
    cells=[]
    for r in (1,2,3,4):
      try: b=[b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"] if b["name"].split("/")[1]==k][0]
      except Exception as e: cells.append("-"); continue
      cells.append(f'{b["GBps_median"]:.1f} ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f})')
    print(f'{k:19s} {v:4s}: ' + ' | '.join(cells))
PY
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
