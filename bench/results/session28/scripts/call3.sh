#!/bin/bash
# Session 28, call 3: where the first decode step's enqueue goes. hgca-decode built with
# probe.patch (steady_clock marks between the sections of CudaRuntime::enqueue, printed per call
# to stderr when HGCA_PROBE is set); the default run, 3 times.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
for i in 1 2 3; do
  HGCA_PROBE=1 timeout 30 $D/bin/hgca-decode-probe --json > $R/decode-$i.json 2>$R/probe-$i.txt || echo "run $i rc=$?"
done
python3 - $R <<'PY'
import json, sys, re
R = sys.argv[1]
for i in (1, 2, 3):
    r = json.load(open(f"{R}/decode-{i}.json"))
    lines = open(f"{R}/probe-{i}.txt").read().splitlines()
    calls = [l for l in lines if l.startswith("probe")]
    n_prefill = len(calls) - 4 * len(r["tbt_ms"])
    print(f"run {i}: enqueue_ms step0..2 {[round(x,3) for x in r['enqueue_ms'][:3]]}, calls {len(calls)}, prefill calls {n_prefill}")
    for l in calls[n_prefill - 4:n_prefill + 12]: print("  ", l)
PY
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
