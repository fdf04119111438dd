#!/bin/bash
# Session 20, call 11: main (21f2b33) against ScatterLanes' cap on lanes scattering at once (cap:
# half the arena's threads), FlashD2H into stores at 1, 4, 8 and 16 layers; peers in the same
# processes; guest memory touched first; interleaved, 3 rounds of 2 repetitions (6 iterations each).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call11; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3; do for v in main cap; do
  $B/bt_$v --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
for v in main cap; do echo "== $v"; python3 bench/results/flash-transfer/session20-layers/summary.py $R/${v}_r*.json | tee $R/summary_$v.txt; done
cd $OUT && tar czf call11.tgz call11 && rm -rf call11
