#!/bin/bash
# Session 18, generic-split call 1: the generic path's key split (working tree on top of the
# session's main). The whole GPU suite and the model tests; memcheck and racecheck of the new test;
# the G 16 (Hq 32, Hkv 2) decode shapes against SDPA, alternated, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$(mktemp -d)
. bench/results/gpu-window/generic-split/tests.sh
for r in 1 2 3; do
  timeout 120 $B/hgca_bench_gpu --benchmark_filter='WindowDecode/batch:[0-9]+/hkv:2/' --benchmark_format=json \
    --benchmark_out=$R/hgca_round$r.json > /dev/null 2>>$R/stderr.txt
  timeout 200 python3 - > $R/sdpa_round$r.json 2>>$R/stderr.txt <<'PY'
import json, sys
sys.path.insert(0, "bench/peers"); import torch_sdpa_window as t
print(json.dumps({"results": [t.bench(b, 2, w) for b in (1, 16, 64) for w in (1024, 4096, 16384)]}))
PY
done
python3 bench/results/gpu-window/sweep-context/summary.py $R | grep -v "lowest" | awk 'NR == 1 || $2 == 2' | tee $R/summary.txt
tar -C $R -czf $OUT/results.tgz .
