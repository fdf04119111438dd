#!/bin/bash
# Session 20, call 5: main (base); appends streamed (nt); + their rows prefetched (pf); fourfold
# growth alone (x4); pf + fourfold growth (pf4). Interleaved rounds, 5 repetitions of 6 iterations each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call5; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
V="base nt pf x4 pf4"
for r in 1 2 3; do for v in $V; do
  $B/bt_$v --benchmark_filter="$S" --benchmark_repetitions=5 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
python3 - $R "$V" <<'PY'
import json, sys, statistics as st
R, V = sys.argv[1], sys.argv[2].split()
for k in ("flash_store_steady","flash_store"):
  for v in V:
    per_round=[]; allv=[]
    for r in (1,2,3):
      bs=[b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"] if b["name"].split("/")[1]==k and b.get("run_type")=="iteration"]
      xs=[b["GBps_median"] for b in bs]; allv+=xs; per_round.append(st.median(xs))
    print(f'{k:19s} {v:5s}: median of 15 {st.median(allv):.1f}  rounds ' + ' / '.join(f'{x:.1f}' for x in per_round) + f'  range {min(allv):.1f}-{max(allv):.1f}')
PY
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
