#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/thr; mkdir -p $R
for r in 1 2; do for th in 0 15 14 12 8; do
  S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:$th/selected_pct:10/layers:1/laps:4/"
  HGCA_TIMELINE=$R/t${th}_r$r $B/bt_tl --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/t${th}_r$r.json > /dev/null 2>&1
done; done
python3 - $R <<'PY'
import json, sys
R=sys.argv[1]
for th in (0,15,14,12,8):
  cells=[]
  for r in (1,2):
    b=json.load(open(f"{R}/t{th}_r{r}.json"))["benchmarks"][0]
    rows=[list(map(float,l.split())) for l in open(f"{R}/t{th}_r{r}_2.tsv")]
    d=sorted(x[6]-x[5] for x in rows)
    cells.append(f'{b["GBps_median"]:.1f} (copy {b["copy_GBps"]:.0f} scat {b["scatter_GBps"]:.0f} med {d[len(d)//2]:.0f} p90 {d[int(.9*len(d))]:.0f} n>250 {sum(1 for x in d if x>250)})')
  print(th, " | ".join(cells))
PY
cd $OUT && tar czf thr.tgz thr && rm -rf thr
