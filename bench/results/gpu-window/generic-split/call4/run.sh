#!/bin/bash
# Session 18, generic-split call 4: the key split's constants. hgca_bench_gpu_exp is call 2's code
# with generic_slices' constants read from HGCA_EXP_GEN_TARGET (attend blocks aimed at, 1280),
# HGCA_EXP_GEN_MIN_KEYS (shortest slice, 256) and HGCA_EXP_GEN_MAX_SPLITS (64). G 16 shapes, 1 round.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
for cfg in "1280 256 64" "1280 64 64" "1280 32 64" "2560 64 64" "2560 32 128" "5120 32 128" "5120 64 128" "640 64 64"; do
  set -- $cfg
  HGCA_EXP_GEN_TARGET=$1 HGCA_EXP_GEN_MIN_KEYS=$2 HGCA_EXP_GEN_MAX_SPLITS=$3 timeout 120 $D/bin/hgca_bench_gpu_exp \
    --benchmark_filter='WindowDecode/batch:[0-9]+/hkv:2/' --benchmark_counters_tabular=true 2>/dev/null |
    awk -v c="$cfg" '/hkv:2/ {split($1, a, "/"); print c, a[2], a[4], $2}'
done | tee $OUT/sweep.txt
python3 - $OUT/sweep.txt <<'PY'
import sys, collections
rows = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    t, mk, ms, b, w, us = l.split(); rows[(t, mk, ms)][(b, w)] = float(us)
shapes = sorted({s for r in rows.values() for s in r}, key=lambda s: (int(s[0][6:]), int(s[1][7:])))
print("target minkeys maxsplits | " + " ".join(f"{b[6:]}/{w[7:]}" for b, w in shapes))
for k, r in rows.items(): print(" ".join(k), "|", " ".join(f"{r.get(s, 0):8.1f}" for s in shapes))
PY
