#!/bin/bash
# Session 47, call 5 (the commit in .device/commit; one H200): call 4's prefill-heavy run again (its
# round 1 ran past the 25 s limit for every variant), 2 rounds interleaved, each run's wall time kept.
CALL=${CALL:-call5}; source bench/results/session47/scripts/common.sh
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 4 --context 4096 --chunk 512 --window-blocks 32 --decode-steps 8"
for r in 1 2; do
  for v in old-auto new-auto new-off; do
    bin=$D/bin/hgca-decode; [ ${v%%-*} = old ] && bin=$D/bin/hgca-decode-old
    t0=$(date +%s.%N)
    HGCA_CONFIG= timeout 40 $bin $W --overflow ${v#*-} --json > $R/prefill-$v-r$r.json 2> $R/prefill-$v-r$r.err; rc=$?
    echo "prefill $v r$r rc=$rc wall $(echo "$(date +%s.%N) - $t0" | bc) s"
  done
done | tee $R/walls.txt
python3 - $R <<'PY' | tee $R/table.txt
import json, sys
d = sys.argv[1]
for v in ("old-auto", "new-auto", "new-off"):
    for r in (1, 2):
        try: j = json.load(open(f"{d}/prefill-{v}-r{r}.json"))
        except Exception as e: print(v, r, "missing"); continue
        print(f"{v:9s} r{r} prefill_s {j['prefill_s']:.3f} tbt p50 {j['tbt_ms_p50']:.3f} ms items moved {sum(l['overflow_items'] for l in j['layers'])}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
