#!/bin/bash
# Session 25, call 3: call 1's A/B once more (segments 20a19cf against main 7d61290, FlashD2H into
# the stores, peers in the same processes), without the tests (it got a fresh VM): the two
# builds alternate, 4 rounds of 2 repetitions each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader; nproc
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady(_varied)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/|BM_D2H/flash_store/block_KB:16/slots:(4|8|16)/threads:0/selected_pct:10/layers:(1|4|8)/laps:4/|BM_D2H/memcpy_(batch|per_block)/block_KB:16/"
for r in 1 2 3 4; do
  for b in main segments; do
    t0=$(date +%s)
    timeout 100 $D/$b/hgca_bench_transfer --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "$b round $r failed"
    echo "$b round $r $(( $(date +%s) - t0 )) s"
  done
done
for b in main segments; do echo "== $b"; python3 bench/results/flash-transfer/session20-layers/summary.py $R/$b-r*.json | tee $R/summary-$b.txt; done
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
