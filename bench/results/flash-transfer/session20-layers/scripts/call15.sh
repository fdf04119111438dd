#!/bin/bash
# Session 20, call 15: flash_store_steady against flash_store_steady_varied (each sequence's evicted
# MAW drawn per step, same distribution) at 1, 4, 8 and 16 layers, with the peers; 3 rounds of 2
# repetitions; guest memory touched first.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call15; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady(_varied)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3; do
  $B/hgca_bench_transfer --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 bench/results/flash-transfer/session20-layers/summary.py $R/r*.json | tee $R/summary.txt
python3 - $R/r*.json <<'PY'
import json, sys
for p in sys.argv[1:2]:
  for b in json.load(open(p))["benchmarks"]:
    if "steady" in b["name"] and b.get("run_type")=="iteration": print(b["name"].split("/")[1], b["name"].split("/")[6], "selected_fraction", round(b["selected_fraction"],4))
PY
cd $OUT && tar czf call15.tgz call15 && rm -rf call15
