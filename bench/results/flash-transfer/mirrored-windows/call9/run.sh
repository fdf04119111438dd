#!/bin/bash
# Session 9, call 9: hgca-decode's default run at the final library (5879c6c = HEAD) against the
# base (703a2b7), alternated, 4 runs each: time between tokens and the share spent on transfers.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2 3 4; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json; echo "decode $v $rep rc=$?"
done; done
python3 - $R <<'PY' | tee $R/summary.txt
import json, sys
R = sys.argv[1]
for rep in (1, 2, 3, 4):
  for v in ("base", "new"):
    j = json.load(open(f"{R}/decode_{v}_{rep}.json"))
    print("decode", v, rep, j["backend"], "p50", round(j["tbt_ms_p50"], 3), "p99", round(j["tbt_ms_p99"], 3), "tok/s", round(j["tokens_per_s"]),
          "transfer share", round(j["transfer_share"], 4), "decode_transfer_ms", round(j["decode_transfer_ms"], 3))
PY
