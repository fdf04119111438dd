# Sourced by calls 5-7's run.sh with B and R set, and the builds to time as arguments
# (prefix:binary ...): the G 16 (Hq 32, Hkv 2) decode shapes, each build then SDPA, alternated,
# 3 rounds; then summary.py's table.
F='WindowDecode/batch:[0-9]+/hkv:2/'
for r in 1 2 3; do
  for x in "$@"; do
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
