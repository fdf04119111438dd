#!/bin/bash
# Session 20, call 7: as call 6 with 1, 4 and 8 layers (2 staging slots per layer at 4 and 8), 4 rounds.
# main (base) against pf4 (appends streamed and prefetched, fourfold growth); interleaved, 3 repetitions of 6 iterations each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call7; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|8|16)/threads:0/selected_pct:10/layers:[148]/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/"
V="base pf4"
for r in 1 2 3 4; do for v in $V; do
  t0=$(date +%s)
  $B/bt_$v --benchmark_filter="$S" --benchmark_repetitions=3 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
  echo "$v r$r $(( $(date +%s) - t0 )) s"
done; done
python3 - $R "$V" <<'PY'
import json, sys, statistics as st, collections
R, V = sys.argv[1], sys.argv[2].split()
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in V:
  for r in (1,2,3,4):
    for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"]:
      if b.get("run_type")!="iteration": continue
      n=b["name"].split("/")
      key="/".join([n[1]]+[x for x in n[2:] if x.startswith(("slots","layers"))])
      rows[key][v].append(b["GBps_median"])
for key in rows:
  print(f'{key:40s} ' + '  '.join(f'{v}: {st.median(rows[key][v]):.1f} ({min(rows[key][v]):.1f}-{max(rows[key][v]):.1f}, n={len(rows[key][v])})' for v in V))
PY
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
