#!/bin/bash
# Session 10, call 6: is hgca-decode's slower p50 with streamed bulk rows (call 5) the asynchronous
# re-evaluations (which read the prompt's store blocks)? base (bd47dd2) against new, alternated,
# with --deterministic (re-evaluations publish before the next call) and without.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
for mode in det async; do for rep in 1 2 3 4; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  a=""; [ $mode = det ] && a="--deterministic"
  timeout 30 $d --json $a 2>/dev/null > $R/decode_${mode}_${v}_$rep.json || echo "decode $mode $v $rep failed"
done; done; done
python3 - $R <<'PY' > $R/summary.txt
import json, sys, statistics
R = sys.argv[1]
for mode in ("det", "async"):
  for v in ("base", "new"):
    p = [json.load(open(f"{R}/decode_{mode}_{v}_{r}.json"))["tbt_ms_p50"] for r in (1, 2, 3, 4)]
    t = [json.load(open(f"{R}/decode_{mode}_{v}_{r}.json"))["tokens_per_s"] for r in (1, 2, 3, 4)]
    print(mode, v, "p50", " ".join(f"{x:.3f}" for x in p), "mean", f"{statistics.mean(p):.3f}", "tok/s mean", round(statistics.mean(t)))
PY
mkdir -p $R/json; mv $R/*.json $R/json/; cd $R && tar czf json.tgz json && rm -rf json
cat $R/summary.txt
