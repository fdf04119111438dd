#!/bin/bash
# Session 20, call 17: flash_store_steady and _varied at 1, 4 and 8 layers: main, growth copies of
# large caches in parallel pieces (par), fourfold growth (x4); interleaved, 3 rounds of 2 repetitions.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call17; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady(_varied)?/block_KB:16/slots:(4|8|16)/threads:0/selected_pct:10/layers:(1|4|8)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/"
for r in 1 2 3; do for v in main par x4; do
  $B/bt_$v --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
for v in main par x4; do echo "== $v"; python3 bench/results/flash-transfer/session20-layers/summary.py $R/${v}_r*.json | tee $R/summary_$v.txt; done
cd $OUT && tar czf call17.tgz call17 && rm -rf call17
