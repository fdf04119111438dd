#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/warm; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/"
HGCA_TIMELINE=$R/cold $B/bt_ph --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/cold.json > /dev/null 2>&1
free -g | head -2
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
free -g | head -2
for r in 1 2 3; do
  HGCA_TIMELINE=$R/warm$r $B/bt_ph --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/warm$r.json > /dev/null 2>&1
done
cd $OUT && tar czf warm.tgz warm && rm -rf warm
