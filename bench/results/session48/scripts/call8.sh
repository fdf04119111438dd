#!/bin/bash
# Session 48, call 8 (the working tree in .device/commit; one H200): the GPU tests of the overflow policy,
# the method and exactness at that tree; then the cost model's new price of a moved append (read in
# place once per tile of 8 (row, head) pairs: call 7), before (hgca-decode-old: ad71609's model, one
# read plus the attention) and after, with the policy off beside, on stop 47's prefill-heavy
# synthetic run: 8 layers, 32 query heads, 8 KV heads, head dim 128, bf16, batch 4, a 4096-token
# prompt in appends of 512, a 2048-token window, 8 decode steps; and hgca-decode's default run
# (mostly decode) the same way; 3 rounds interleaved.
CALL=${CALL:-call8}; source bench/results/session48/scripts/common.sh
timeout 200 $D/bin/hgca_gpu_tests --gtest_filter='*Overflow*:*SparseMethod*:*Exact*' > $R/gpu_tests.log 2>&1
echo "gpu tests rc=$? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $R/gpu_tests.log | tr '\n' ' ')"
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 4 --context 4096 --chunk 512 --window-blocks 32 --decode-steps 8"
for r in 1 2 3; do
  for v in old-auto new-auto new-off; do
    bin=$D/bin/hgca-decode; [ ${v%%-*} = old ] && bin=$D/bin/hgca-decode-old
    HGCA_CONFIG= timeout 25 $bin $W --overflow ${v#*-} --json > $R/prefill-$v-r$r.json 2> $R/prefill-$v-r$r.err; echo "prefill $v r$r rc=$?"
    HGCA_CONFIG= timeout 15 $bin --overflow ${v#*-} --json > $R/default-$v-r$r.json 2> $R/default-$v-r$r.err; echo "default $v r$r rc=$?"
  done
done
python3 - $R <<'PY' | tee $R/table.txt
import json, sys, statistics
d = sys.argv[1]
for kind in ("prefill", "default"):
    for v in ("old-auto", "new-auto", "new-off"):
        pre, tbt, items, calls = [], [], [], []
        for r in (1, 2, 3):
            try: j = json.load(open(f"{d}/{kind}-{v}-r{r}.json"))
            except Exception as e: print(kind, v, r, "missing", e); continue
            pre.append(j["prefill_s"]); tbt.append(j["tbt_ms_p50"])
            items.append(sum(l["overflow_items"] for l in j["layers"])); calls.append(sum(l["overflow_calls"] for l in j["layers"]))
        if pre: print(f"{kind:8s} {v:9s} prefill_s {' '.join('%.3f' % x for x in pre)} (median {statistics.median(pre):.3f})"
                      f" | tbt p50 ms {' '.join('%.3f' % x for x in tbt)} | calls moving {calls} items moved {items}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
