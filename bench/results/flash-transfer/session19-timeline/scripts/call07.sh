#!/bin/bash
# A/B: $1 and $2 binaries (bt_*), alternated 3 rounds, steady 16 KB 10 % laps 4, with timelines.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/ab; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/"
for r in 1 2 3; do for v in "$@"; do
  HGCA_TIMELINE=$R/${v}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1
done; done
python3 - $R "$@" <<'PY'
import json, sys, statistics as st, collections
R=sys.argv[1]
for v in sys.argv[2:]:
  for r in (1,2,3):
    bs={b["name"].split("/")[1]: b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"]}
    s=bs["flash_store_steady"]; p=bs["flash_pool"]
    steps=[list(map(float,l.split())) for l in open(f"{R}/{v}_r{r}_2.tsv")]
    d=[x[6]-x[5] for x in steps]; m=st.median(d)
    seq=collections.defaultdict(list)
    for l in open(f"{R}/{v}_r{r}_2_seq.tsv"):
      x=list(map(float,l.split())); seq[int(x[0])].append(x[3]-x[2])
    print(f'{v:5s} r{r}: store {s["GBps_median"]:.1f} (copy {s["copy_GBps"]:.0f} scat {s["scatter_GBps"]:.0f}) pool {p["GBps_median"]:.1f} | step med {m:.0f} mean {st.mean(d):.0f} >1.6med {sum(1 for x in d if x>1.6*m)} excess {sum(x-m for x in d if x>1.6*m):.0f}us | seq max med {st.median([max(seq[t]) for t in seq]):.0f}')
PY
cd $OUT && tar czf ab.tgz ab && rm -rf ab
