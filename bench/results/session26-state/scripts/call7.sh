#!/bin/bash
# Session 26, call 7: whether fresh stores fall behind steady ones because StoreWrites::kAuto
# writes their rows through the cache until the store memory in use passes the last-level cache
# (fresh stores start small; steady ones are past it from the start): FlashD2H into fresh and
# steady stores at 1, 8 and 16 layers with HGCA_BENCH_STORE_WRITES=auto (the default) and
# =streamed, alternating, 3 rounds. The build of 5d17b5a. Guest memory touched first.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call7; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|16|32)/threads:0/selected_pct:10/layers:(1|8|16)/laps:4/|BM_D2H/memcpy_batch/block_KB:16/'
for r in 1 2 3; do
  for w in auto streamed; do
    HGCA_BENCH_STORE_WRITES=$w timeout 120 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json \
      --benchmark_out=$R/$w-r$r.json > /dev/null 2>&1 || echo "$w round $r failed"
  done
done
python3 - $R <<'PY'
import collections, glob, json, statistics as st, sys
cells = collections.defaultdict(list)
for p in sorted(glob.glob(sys.argv[1] + "/*-r*.json")):
    w = p.rsplit("/", 1)[1].split("-")[0]
    for b in json.load(open(p))["benchmarks"]:
        parts = b["name"].split("/")
        key = "/".join([parts[1]] + [x for x in parts if x.startswith("layers")])
        cells[(key, w)].append(b["GBps_median"])
print(f"{'benchmark':32s} {'auto (per round)':28s} {'streamed (per round)':28s} streamed/auto")
for key in sorted({k for k, _ in cells}):
    a, s = cells.get((key, "auto"), []), cells.get((key, "streamed"), [])
    f = lambda v: " ".join(f"{x:5.1f}" for x in v)
    r = f"{st.median(s) / st.median(a):.3f}" if a and s else "-"
    print(f"{key:32s} {f(a):28s} {f(s):28s} {r}")
PY
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
