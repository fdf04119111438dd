#!/bin/bash
# Session 31, call 1: fresh against steady stores, the store scatter alone (CPU, no copies), and
# FlashD2H into fresh and steady stores at 1 and 8 layers, same VM.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call1; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep "Model name" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for t in 16 8; do echo "== threads $t"; timeout 100 $D/bin/fresh_steady $t 64 4 | tee $R/exp_t$t.txt; done
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|16)/threads:0/selected_pct:10/layers:(1|8)/laps:4/"
for r in 1 2; do
  timeout 120 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json 2>&1 | grep -E "^BM_" | awk '{print $1, $NF}' 
done
cat $R/machine.txt
