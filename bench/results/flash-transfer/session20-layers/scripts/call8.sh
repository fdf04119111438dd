#!/bin/bash
# Session 20, call 8: FlashD2H into stores at 1, 4 and 8 layers (main at f0b7d6a) against its peers
# in the same process; guest memory touched first; 4 rounds of 3 repetitions (6 iterations each).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call8; mkdir -p $R
nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader; nproc
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|8|16)/threads:0/selected_pct:10/layers:[148]/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3 4; do
  t0=$(date +%s)
  $B/hgca_bench_transfer --benchmark_filter="$S" --benchmark_repetitions=3 --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 bench/results/flash-transfer/session20-layers/summary.py $R/r*.json | tee $R/summary.txt
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
