#!/bin/bash
# Session 27, call 6: issue 5 on main as it stands (2e12fa8: the context caches' first segment
# 16 KiB), session 26's call 3 again: FlashH2D at 4, 16 and 64 KB on 2, 4 and 8 SMs; FlashD2H into the stores in the runtime's shapes (1, 4, 8, 16 layers; steady, varied
# and fresh stores) and the copies alone; a compute-bound kernel alone and beside FlashD2H; the
# peers (cudaMemcpyBatchAsync, one cudaMemcpyAsync per block) in the same process. Guest memory
# touched first; 3 rounds of one repetition.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call6; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_H2D/(flash|memcpy_batch|memcpy_per_block)/|BM_Compute|BM_D2H/flash_copy_only/block_KB:16/slots:2/'
S="$S|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/"
S="$S|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 bench/results/session26-state/summary.py xfer $R | tee $R/summary.md
cd $OUT && tar czf call6.tgz call6 && rm -rf call6
