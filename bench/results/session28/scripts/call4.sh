#!/bin/bash
# Session 28, call 4: call 3's probe, with the prefill's re-evaluations finished before decode
# starts (--deterministic: each publishes before the layer's next call), against the default, 3
# runs each, alternating. Is the first decode step slower because they still run on half the cores?
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
for i in 1 2 3; do
  HGCA_PROBE=1 timeout 30 $D/bin/hgca-decode-probe --json > $R/default-$i.json 2>$R/default-probe-$i.txt || echo "default $i rc=$?"
  HGCA_PROBE=1 timeout 30 $D/bin/hgca-decode-probe --json --deterministic > $R/det-$i.json 2>$R/det-probe-$i.txt || echo "det $i rc=$?"
done
python3 - $R <<'PY'
import json, sys, re
R = sys.argv[1]
print(f"{'run':<10} {'step0':>6} {'step1':>6} {'step2':>6} {'p50':>6}  step0's four calls (us)")
for v in ("default", "det"):
    for i in (1, 2, 3):
        r = json.load(open(f"{R}/{v}-{i}.json"))
        calls = [l for l in open(f"{R}/{v}-probe-{i}.txt").read().splitlines() if l.startswith("probe")]
        n_prefill = len(calls) - 4 * len(r["tbt_ms"])
        tot = [float(re.search(r"total=([\d.]+)", l).group(1)) for l in calls[n_prefill:n_prefill + 4]]
        e = r["enqueue_ms"]
        print(f"{v}-{i:<6} {e[0]:6.3f} {e[1]:6.3f} {e[2]:6.3f} {r['tbt_ms_p50']:6.3f}  {tot}")
PY
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
