#!/bin/bash
# Session 20, call 12 (diagnosis; benchmark build with extra Args, not committed): flash_store_steady
# by staging slots at 1, 8 and 16 layers. At 1 layer the lane lets the copies run at most about
# two steps ahead whatever the slots, so the slots change only how much staging the copies cycle through.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call12; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:[0-9]*/threads:0/selected_pct:10/layers:(1|8|16)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/"
for r in 1 2 3; do
  $B/bt_footprint --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 - $R/r*.json <<'PY'
import json, sys, statistics as st, collections
runs=collections.defaultdict(list); cs=collections.defaultdict(list)
for p in sys.argv[1:]:
  for b in json.load(open(p))["benchmarks"]:
    if b.get("run_type")!="iteration": continue
    n=b["name"].split("/"); k="/".join([n[1]]+[x for x in n[2:] if x.startswith(("slots","layers"))])
    runs[k].append(b["GBps_median"]); cs[k].append(b["copy_GBps"])
def order(k):
  f=dict(x.split(":") for x in k.split("/")[1:]); return (int(f.get("layers",0)), int(f["slots"]))
for k in sorted(runs, key=order):
  v=runs[k]; print(f"{k:40s} {st.median(v):5.1f} ({min(v):.1f}-{max(v):.1f}, {len(v)})  copy {st.median(cs[k]):.0f}")
PY
cd $OUT && tar czf call12.tgz call12 && rm -rf call12
