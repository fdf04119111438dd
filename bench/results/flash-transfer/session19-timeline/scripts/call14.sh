#!/bin/bash
# A/B, warm guest memory: main (base) against context caches that move their rows ahead once their
# halves reach 1 MiB (new). At 10 % selected the caches stay below that (both copy whole); at 50 %
# they pass it in the first lap.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/call14; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3 4; do for p in 10 50; do for v in base new; do
  S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:$p/layers:1/laps:4/"
  HGCA_TIMELINE=$R/${v}_p${p}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_p${p}_r$r.json > /dev/null 2>&1 || echo "$v $p $r failed"
done; done; done
python3 - $R <<'PY'
import json, sys, statistics as st
R=sys.argv[1]
for p in (10, 50):
  for v in ("base","new"):
    cells=[]
    for r in (1,2,3,4):
      b=json.load(open(f"{R}/{v}_p{p}_r{r}.json"))["benchmarks"][0]
      d=sorted(float(l.split()[6])-float(l.split()[5]) for l in open(f"{R}/{v}_p{p}_r{r}_2.tsv"))
      cells.append(f'{b["GBps_median"]:.1f} (mean {st.mean(d):.0f} max {d[-1]:.0f})')
    print(f'{p}% {v:4s}: ' + ' | '.join(cells))
PY
cd $OUT && tar czf call14.tgz call14 && rm -rf call14
