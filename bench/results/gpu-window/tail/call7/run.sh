#!/bin/bash
# Session 17, call 7: the tail launch at 2 and 3 waves (batch 8 and 12, G 4, W 16384) and at the
# goal shape, against main (base: 8ca6cd0's hgca_bench_gpu with these two shapes registered),
# alternated, 4 rounds. Its summary reads only g*.json (no SDPA in this call).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
G='WindowDecode/batch:(8|12|16)/hkv:8/window:16384/'
for r in 1 2 3 4; do for v in base new; do
  timeout 60 $B/hgca_bench_gpu_$v --benchmark_filter="$G" --benchmark_format=json --benchmark_out=$R/g${v}_$r.json > /dev/null 2>&1 || echo "g $v $r failed"
done; done
python3 - $R <<'PY' | tee $R/summary.txt
import glob, json, statistics as st, sys, collections
R = sys.argv[1]; d = collections.defaultdict(lambda: collections.defaultdict(list)); plan = {}
for v in ("base", "new"):
    for f in sorted(glob.glob(f"{R}/g{v}_*.json")):
        for b in json.load(open(f))["benchmarks"]:
            k = b["name"].split("/iter")[0].replace("BM_WindowDecode/", "")
            d[k][v].append(b["real_time"])
            if v == "new": plan[k] = f'C{int(b["slices"])}' + (f' +{int(b["tail_seqs"])}x{int(b["tail_slices"])}' if b["tail_seqs"] else "")
for k, v in d.items():
    mb, mn = st.median(v["base"]), st.median(v["new"])
    print(f"{k:30s} base {' '.join(f'{x:.1f}' for x in v['base'])} | new {' '.join(f'{x:.1f}' for x in v['new'])} | medians {mb:.1f} / {mn:.1f} = {mb / mn:.3f}x  {plan[k]}")
PY
cd $R && tar czf json.tgz g*.json && rm -f g*.json
