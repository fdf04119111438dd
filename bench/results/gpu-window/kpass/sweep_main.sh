#!/bin/bash
# Not run (the cap was one call): the WindowDecode sweep of main's binary (08f07a3,
# .device-gqa5/bin/hgca_bench_gpu_main) with the SDPA peer, for the split + combine rows that
# call/gpu.json measured with the candidate's split kernel. About 20 s of command time.
D=.device-gqa5
export LD_LIBRARY_PATH=$PWD/$D/lib
R=$OUT/r; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } > $R/machine.txt
timeout 45 $D/bin/hgca_bench_gpu_main --benchmark_filter=WindowDecode --benchmark_out=$R/gpu.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$?"
timeout 45 python3 $D/torch_sdpa_window.py > $R/sdpa.json 2> $R/sdpa.log; echo "sdpa rc=$?"
python3 $D/table.py main=$R/gpu.json sdpa=$R/sdpa.json | tee $R/table.txt
