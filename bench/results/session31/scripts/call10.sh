#!/bin/bash
# Session 31, call 10: issue 5's D2H benchmarks on the final code (75eb700) with their peers in the
# same process: FlashD2H into the stores (1, 4, 8, 16 layers; steady, varied and fresh), the copies
# alone, cudaMemcpyBatchAsync and one cudaMemcpyAsync per block; a compute kernel beside FlashD2H.
# Guest memory touched first; 3 rounds of one repetition. Table: session 26's summary.py.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call10; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_Compute|BM_D2H/flash_copy_only/block_KB:16/slots:2/'
S="$S|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/"
S="$S|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 bench/results/session26-state/summary.py xfer $R | tee $R/summary.md
cat $R/machine.txt
cd $OUT && tar czf call10.tgz call10 && rm -rf call10
