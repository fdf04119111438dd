#!/bin/bash
# Session 20, call 14 (diagnosis; call 12's benchmark build plus HGCA_BENCH_STAGING_THP, not
# committed): the staging on 4 KB pages (cudaHostAlloc) against 2 MB transparent huge pages
# (registered with cudaHostRegister), flash_store_steady at 1, 8 and 16 layers by staging slots.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call14; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|8|16)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/"
for r in 1 2 3; do for v in 4k thp; do
  [ $v = thp ] && export HGCA_BENCH_STAGING_THP=1 || unset HGCA_BENCH_STAGING_THP
  $B/bt_thp --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 &
  pid=$!; sleep 12; echo "$v r$r: $(grep -E 'AnonHugePages|^Anonymous' /proc/$pid/smaps_rollup 2>/dev/null | tr -s ' ' | tr '\n' ' ')"; wait $pid || echo "$v $r failed"
done; done
unset HGCA_BENCH_STAGING_THP
python3 - $R <<'PY'
import json, sys, glob, statistics as st, collections
R=sys.argv[1]; runs=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ("4k","thp"):
  for p in glob.glob(f"{R}/{v}_r*.json"):
    for b in json.load(open(p))["benchmarks"]:
      if b.get("run_type")!="iteration": continue
      n=b["name"].split("/"); k="/".join([n[1]]+[x for x in n[2:] if x.startswith(("slots","layers"))])
      runs[k][v].append(b["GBps_median"])
def order(k):
  f=dict(x.split(":") for x in k.split("/")[1:]); return (int(f.get("layers",0)), int(f["slots"]))
for k in sorted(runs, key=order):
  print(f"{k:40s} " + "  ".join(f"{v}: {st.median(runs[k][v]):5.1f} ({min(runs[k][v]):.1f}-{max(runs[k][v]):.1f}, {len(runs[k][v])})" for v in ("4k","thp")))
PY
cd $OUT && tar czf call14.tgz call14 && rm -rf call14
