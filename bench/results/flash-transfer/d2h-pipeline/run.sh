#!/bin/bash
# Session 8, call 2: FlashD2H's pipeline with each part's own rate (copy_GBps, scatter_GBps), 2 and 3
# staging slots, twice.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
for i in 1 2; do
  timeout 200 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_(pool|copy)|BM_D2HContiguous' --benchmark_format=json --benchmark_out=$R/d2h_$i.json > $R/d2h_$i.log 2>&1; echo "d2h $i rc=$?"
done
python3 - $R <<'PY'
import json, sys, collections
R = sys.argv[1]
t = collections.defaultdict(list)
for i in (1, 2):
    for b in json.load(open(f"{R}/d2h_{i}.json"))["benchmarks"]:
        if "Contiguous" in b["name"]: continue
        t[(b["name"].split("/")[1], int(b["block_KB"]), b["name"].split("slots:")[1].split("/")[0] + "t" + b["name"].split("threads:")[1].split("/")[0])].append(
            f'{b["GBps_median"]:.1f} (copy {b.get("copy_GBps", 0):.1f}, scatter {b.get("scatter_GBps", 0):.1f})')
for (n, kb, sl), v in sorted(t.items()): print(f"{n:21s} {kb:2d}KB s{sl} " + " | ".join(v))
for i in (1, 2):
    print("contiguous", [(b["name"].split("/")[1], round(b["GBps_median"], 1)) for b in json.load(open(f"{R}/d2h_{i}.json"))["benchmarks"] if "Contiguous" in b["name"]])
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
