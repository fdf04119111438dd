#!/bin/bash
# Session 25, call 7: call 6 repeated 3 times, alternated: hgca-decode on the synthetic workload at batch 4, context 4096 and beta 0,
# main (7d61290) against segments (20a19cf), every store entry is selected, so the
# context caches span several segments (about 3.5 K rows per head; the first segment holds 1 K
# rows at D 64 in bf16).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call7; mkdir -p $R
W="--batch 4 --context 4096 --beta 0"
for i in 1 2 3; do for b in main bin; do
  timeout 60 $D/$b/hgca-decode $W --json > $R/decode-$b-$i.json 2> $R/decode-$b-$i.err; echo "$b $i rc=$?"
done; done
python3 - $R <<'PY'
import json, sys
print("build  tbt_p50_ms  tbt_p99_ms  tokens/s  prefill_s  transfer_share  selected")
for b in ("main", "bin"):
  for i in (1, 2, 3):
   try: d = json.load(open(f"{sys.argv[1]}/decode-{b}-{i}.json"))
   except Exception: print(b, "no result"); continue
   print(f"{b:5s} {d['tbt_ms_p50']:10.3f} {d['tbt_ms_p99']:10.3f} {d['tokens_per_s']:9.0f} {d['prefill_s']:9.2f} {d['transfer_share']:14.3f} {d['selected_fraction']:8.3f}")
PY
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
