#!/bin/bash
# Session 28, call 2: is hgca-decode's slower first decode step (0.51 ms against 0.25 in call 1)
# CUDA's lazy module loading (a kernel's first launch loads it)? The default run, alternating
# CUDA_MODULE_LOADING=LAZY (CUDA's default) and EAGER, 4 runs each; same binary as call 1.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
for i in 1 2 3 4; do
  for m in LAZY EAGER; do
    CUDA_MODULE_LOADING=$m timeout 30 $D/bin/hgca-decode --json > $R/decode-$m-$i.json 2>$R/decode-$m-$i.err || echo "$m $i rc=$?"
  done
done
python3 - $R <<'PY'
import json, sys, glob
print(f"{'run':<22} {'step0 tbt':>9} {'step0 enq':>9} {'step1 tbt':>9} {'p50':>6} {'p99':>6}")
for p in sorted(glob.glob(f"{sys.argv[1]}/decode-*.json")):
    r = json.load(open(p))
    print(f"{p.split('/')[-1]:<22} {r['tbt_ms'][0]:9.3f} {r['enqueue_ms'][0]:9.3f} {r['tbt_ms'][1]:9.3f} {r['tbt_ms_p50']:6.3f} {r['tbt_ms_p99']:6.3f}")
PY
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
