#!/bin/bash
# Session 9, call 4: hgca-decode's default run, before (703a2b7: host window rings) and after
# (MirroredKv), alternated, 3 runs each: time between tokens and the share spent on transfers.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
for rep in 1 2 3; do for v in base new; do
  d=$B/hgca-decode; [ $v = base ] && d=${d}_base
  timeout 30 $d --json 2>/dev/null > $R/decode_${v}_$rep.json; echo "$v $rep rc=$?"
done; done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for rep in (1, 2, 3):
  for v in ("base", "new"):
    j = json.load(open(f"{R}/decode_{v}_{rep}.json"))
    print(v, rep, j["backend"], "tbt p50", round(j["tbt_ms_p50"], 3), "p99", round(j["tbt_ms_p99"], 3), "tok/s", round(j["tokens_per_s"]),
          "transfer share", round(j["transfer_share"], 4), "decode_transfer_ms", round(j["decode_transfer_ms"], 3), "store", j["store_tokens"])
PY
