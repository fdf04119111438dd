#!/bin/bash
# Session 26, call 2: issue 4 on main as it stands (736a13d): the CPU engine's decode on every ISA
# path and dtype, all 16 threads, and the balance workload, against PyTorch's CPU SDPA over the
# identical subset; 3 rounds, engine and peer alternating. 4 GiB of K+V (the L3 is 300 MB).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
export HGCA_BENCH_WS_MB=4096
for r in 1 2 3; do
  timeout 150 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried' \
    --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "engine round $r failed"
  timeout 60 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-r$r.json 2> $R/torch-r$r.err || echo "peer round $r failed"
done
python3 bench/results/session26-state/summary.py cpu $R | tee $R/summary.md
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
