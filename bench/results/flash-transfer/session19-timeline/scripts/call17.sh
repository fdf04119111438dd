#!/bin/bash
# The final library (aafc93c): FlashD2H into the stores against its peers in the same process
# (cudaMemcpyBatchAsync and one cudaMemcpyAsync per block, D2H, same blocks), guest memory touched first.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/call17; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
F='BM_D2H/(flash_store_steady|flash_store)/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/'
for r in 1 2 3; do
  $B/hgca_bench_transfer --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 - $R <<'PY'
import json, sys
R=sys.argv[1]; rows={}
for r in (1,2,3):
  for b in json.load(open(f"{R}/r{r}.json"))["benchmarks"]:
    rows.setdefault(b["name"].split("/")[1], []).append(b["GBps_median"])
for k,v in rows.items(): print(f"{k:20s} " + " / ".join(f"{x:.1f}" for x in v))
s=rows["flash_store_steady"]; f=rows["flash_store"]
for peer in ("memcpy_batch","memcpy_per_block"):
  p=rows[peer]; print(f"steady / {peer}: " + " / ".join(f"{a/b:.2f}x" for a,b in zip(s,p)) + f"; fresh / {peer}: " + " / ".join(f"{a/b:.2f}x" for a,b in zip(f,p)))
PY
cd $OUT && tar czf call17.tgz call17 && rm -rf call17
