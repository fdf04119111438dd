#!/bin/bash
# Session 48, call 12 (the working tree in .device/commit; one H200): hgca-decode's synthetic inputs made
# on every core in blocks of 64 rows with their own seeds (new) against one thread (old: e82e35a,
# the same runtime): call 11's prefill-heavy run and the default run, 2 rounds interleaved; wall
# seconds of each run, prefill seconds and time between tokens as it reports them (ROUNDS: rounds, 2).
# Its first run segfaulted in the new binary (call 13: q_dev sized before the inputs were; fixed), run again
# with ROUNDS=1 (the device time left).
CALL=${CALL:-call12}; source bench/results/session48/scripts/common.sh
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 4 --context 4096 --chunk 512 --window-blocks 32 --decode-steps 8"
for r in $(seq 1 ${ROUNDS:-2}); do
  for v in old new; do
    bin=$D/bin/hgca-decode; [ $v = old ] && bin=$D/bin/hgca-decode-old
    for kind in prefill default; do
      args=""; [ $kind = prefill ] && args="$W"
      s=$(date +%s.%N); HGCA_CONFIG= timeout 70 $bin $args --json > $R/$kind-$v-r$r.json 2> $R/$kind-$v-r$r.err; rc=$?
      echo "$kind $v r$r rc=$rc wall $(python3 -c "print(round($(date +%s.%N) - $s, 2))")" | tee -a $R/walls.txt
    done
  done
done
python3 - $R <<'PY' | tee $R/table.txt
import json, sys
d = sys.argv[1]
walls = {}
for line in open(d + "/walls.txt"):
    f = line.split(); walls[(f[0], f[1], f[2])] = float(f[-1])
for kind in ("prefill", "default"):
    for v in ("old", "new"):
        for r in sorted({k[2] for k in walls}):
            try: j = json.load(open(f"{d}/{kind}-{v}-{r}.json"))
            except Exception as e: print(kind, v, r, "missing", e); continue
            print(f"{kind:8s} {v:4s} {r}: wall {walls[(kind, v, r)]:6.2f} s  prefill_s {j['prefill_s']:.3f}  tbt p50 {j['tbt_ms_p50']:.3f} ms  selected {j.get('selected_fraction', float('nan')):.4f}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
