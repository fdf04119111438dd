#!/bin/bash
# Session 25, call 5: hgca-decode on a larger synthetic workload, main (7d61290) against segments
# (20a19cf), alternated, 2 runs each: the runtime's context caches, now in segments, are what the
# CPU engine (and the overflow policy's GPU kernel) attend. Default selection (beta 1) and beta 0
# (every store entry selected: the largest context caches). NOT A RESULT: every run hit its 120 s
# timeout without output (prefill of 8 x 16384 tokens in appends of 2048 re-evaluates the store
# on the CPU each time), and the call its 560 s limit; call 6 is the smaller run.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 8 --context 16384 --chunk 2048 --decode-steps 64"
for beta in 1 0; do for i in 1 2; do for b in main bin; do
  timeout 120 $D/$b/hgca-decode $W --beta $beta --json > $R/decode-beta$beta-$b-$i.json 2> $R/decode-beta$beta-$b-$i.err
  echo "beta $beta $b $i rc=$?"
done; done; done
python3 - $R <<'PY'
import json, sys, glob
print("beta build  tbt_p50_ms  tbt_p99_ms  tokens/s  prefill_s  transfer_share  selected")
for beta in ("1", "0"):
  for b in ("main", "bin"):
    for p in sorted(glob.glob(f"{sys.argv[1]}/decode-beta{beta}-{b}-*.json")):
      try: d = json.load(open(p))
      except Exception: print(beta, b, "no result"); continue
      print(f"{beta:4s} {b:5s} {d['tbt_ms_p50']:10.3f} {d['tbt_ms_p99']:10.3f} {d['tokens_per_s']:9.0f} {d['prefill_s']:9.2f} {d['transfer_share']:14.3f} {d['selected_fraction']:8.3f}")
PY
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
