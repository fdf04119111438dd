#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/it; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2; do
  HGCA_TIMELINE=$R/w$r $B/bt_ph --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/w$r.json > /dev/null 2>&1
  cat $R/w${r}_2_iters.txt
done
cd $OUT && tar czf it.tgz it && rm -rf it
