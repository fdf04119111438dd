#!/bin/bash
# Session 27, call 4: call 3's FlashD2H comparison again on another VM, the first segment at 128
# and 16 KiB in ABBA order (4 rounds, 8 runs of the program after one discarded warm-up run),
# guest memory touched first.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
cat /proc/loadavg
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store(_steady_varied)?/block_KB:16/slots:(4|16)/threads:0/selected_pct:10/layers:(1|8)/laps:4/'
timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter="$S" > /dev/null 2>&1 || echo "warm-up failed"
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="128 16"; else order="16 128"; fi
  for kb in $order; do
    HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter="$S" \
      --benchmark_format=json --benchmark_out=$R/d2h-$kb-r$r.json > /dev/null 2>&1 || echo "d2h $kb round $r failed"
  done
done
cat /proc/loadavg
python3 - $R <<'PY' | tee $R/d2h-summary.txt
import glob, json, re, sys
rows = {}
for p in sorted(glob.glob(sys.argv[1] + "/d2h-*.json"), key=lambda p: int(re.search(r"-r(\d+)", p).group(1))):
    kb = int(re.search(r"d2h-(\d+)-r", p).group(1))
    for b in json.load(open(p))["benchmarks"]:
        n = b["name"]
        key = ("fresh" if "/flash_store/" in n else "steady_varied") + " L" + re.search(r"layers:(\d+)", n).group(1)
        rows.setdefault((key, kb), []).append((b["GBps_median"], b["scatter_GBps"]))
print(f"{'FlashD2H into stores':20s} {'first segment':>13s}  GB/s per round (scatter GB/s)")
for (key, kb), v in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
    g = sorted(x for x, _ in v)
    print(f"{key:20s} {kb:10d} KiB  " + " ".join(f"{x:5.1f} ({s:4.1f})" for x, s in v) + f"   median {(g[1] + g[2]) / 2:5.1f}")
PY
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
