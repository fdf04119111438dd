#!/bin/bash
# Session 13, call 3: tile_stages at 48 KB per block (new: 3 stages at D 128) against main 4fc73b1 (base),
# the WindowDecode sweep alternated 3 rounds, then PyTorch SDPA.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
true
for r in 1 2 3; do for v in base new; do
  timeout 90 $B/hgca_bench_gpu_$v --benchmark_filter='WindowDecode' --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
timeout 90 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 $D/summary.py $R | tee $R/summary.txt
