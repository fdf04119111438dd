#!/bin/bash
# Session 11, call 3: FlashD2H into the stores with rows streamed, three builds alternated, two
# rounds: base (a86c7bf), lanes (ScatterLanes chaining), new (chaining, and the benchmark's pipeline
# keeping n − 1 copies in flight instead of one). Then the new build with auto store writes.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
F='BM_D2H/flash_store/block_KB:(4|16|64)/slots:4/threads:0/selected_pct:10/layers:(1|2)/|BM_D2H/flash_store_steady/block_KB:(16|64)/slots:4/threads:0/selected_pct:10/|BM_D2H/flash_pool/block_KB:16/slots:(2|4)/|BM_D2H/memcpy_batch/block_KB:(4|16|64)/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2; do for v in base lanes new; do
  b=$B/hgca_bench_transfer; [ $v != new ] && b=${b}_$v
  HGCA_BENCH_STORE_WRITES=streamed timeout 120 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${v}_streamed_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
for rep in 1 2; do
  HGCA_BENCH_STORE_WRITES=auto timeout 120 $B/hgca_bench_transfer --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_new_auto_$rep.json > /dev/null 2>&1; echo "d2h new auto $rep rc=$?"
done
python3 - $R <<'PY' > $R/summary.txt
import json, sys
R = sys.argv[1]
rows, cols = {}, []
for rep in (1, 2):
  for v, m in (("base", "streamed"), ("lanes", "streamed"), ("new", "streamed"), ("new", "auto")):
    cols.append((v, m, rep))
    try:
      for b in json.load(open(f"{R}/d2h_{v}_{m}_{rep}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].replace("/threads:0", "").replace("/manual_time", "").replace("BM_D2H/", "")
        x = f'{b["GBps_median"]:.1f}'
        if "scatter_GBps" in b: x += f' ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f})'
        rows.setdefault(n, {})[(v, m, rep)] = x
    except Exception as e: print(v, m, rep, e)
print("benchmark (GB/s median; copy/scatter)".ljust(62), " ".join(f"{v[:5]}{'-a' if m == 'auto' else ''}{r}".rjust(14) for v, m, r in cols))
for n, d in rows.items():
  print(n.ljust(62), " ".join(d.get(c, "-").rjust(14) for c in cols))
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
cat $R/summary.txt
