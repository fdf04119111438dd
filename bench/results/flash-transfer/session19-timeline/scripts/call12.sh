#!/bin/bash
# A/B: context caches that grow by moving rows ahead (new) against main (base). The guest's memory
# is touched first (a fresh VM's first touches stall single sequences for 0.4-0.9 ms, see README).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/grow; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do for v in base new; do
  HGCA_TIMELINE=$R/${v}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
python3 - $R <<'PY'
import json, sys, statistics as st
R=sys.argv[1]
for v in ("base","new"):
  for r in (1,2,3):
    bs={b["name"].split("/")[1]: b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"]}
    cells=[]
    for k in ("flash_store_steady","flash_store","flash_pool"):
      b=bs[k]; cells.append(f'{k[6:]} {b["GBps_median"]:.1f} ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f})')
    d=sorted(float(l.split()[6])-float(l.split()[5]) for l in open(f"{R}/{v}_r{r}_2.tsv"))
    print(f'{v:4s} r{r}: ' + ' | '.join(cells) + f' | steady steps p50 {d[len(d)//2]:.0f} p99 {d[int(.99*len(d))]:.0f} max {d[-1]:.0f} us')
PY
cd $OUT && tar czf grow.tgz grow && rm -rf grow
