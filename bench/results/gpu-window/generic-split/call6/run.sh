#!/bin/bash
# Session 18, generic-split call 6: call 5's change plus the combine kernel as a block per (row,
# query head) whose warps take the slices in turn. hgca_bench_gpu: at most 64 slices;
# hgca_bench_gpu_s128: the same with kGenMaxSplits 128; hgca_bench_gpu_base: main cc0b4ef (no split).
# The GPU tests as in call 5 (64 slices), then the G 16 shapes alternated with SDPA, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$(mktemp -d)
. bench/results/gpu-window/generic-split/tests.sh
F='WindowDecode/batch:[0-9]+/hkv:2/'
for r in 1 2 3; do
  for x in base:hgca_bench_gpu_base hgca:hgca_bench_gpu s128:hgca_bench_gpu_s128; do
    timeout 200 $B/${x#*:} --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/${x%%:*}_round$r.json > /dev/null 2>>$R/stderr.txt
  done
  timeout 200 python3 - > $R/sdpa_round$r.json 2>>$R/stderr.txt <<'PY'
import json, sys
sys.path.insert(0, "bench/peers"); import torch_sdpa_window as t
print(json.dumps({"results": [t.bench(b, 2, w) for b in (1, 16, 64) for w in (1024, 4096, 16384)]}))
PY
done
python3 bench/results/gpu-window/generic-split/summary.py $R | tee $R/summary.txt
tar -C $R -czf $OUT/results.tgz .
