#!/bin/bash
# Session 5: re-evaluations in a low-priority arena with half the threads (new) against 518db6c (base), --threads 8, where
# the base waited 50-112 ms in a decode step behind the prefill's re-evaluations; and the default.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
for round in 1 2 3; do
  for v in base new; do
    bin=$B/hgca-decode; [ $v = base ] && bin=$B/hgca-decode-base
    timeout 30 $bin --json --threads 8 2>/dev/null >> $R/decode_${v}_t8.jsonl
    timeout 30 $bin --json 2>/dev/null >> $R/decode_${v}_t0.jsonl
  done
done
(cd $OUT && tar czf results.tgz r)
python3 - <<'PY'
import json, os
R=os.environ['OUT']+'/r'
for v in ['base_t8','new_t8','base_t0','new_t0']:
    dec=json.JSONDecoder(); s=open(f'{R}/decode_{v}.jsonl').read(); i=0
    while True:
        s2=s[i:].lstrip()
        if not s2: break
        o,n=dec.raw_decode(s2); i=len(s)-len(s2)+n
        t=o['tbt_ms']; p=o['tbt_ms_p50']
        print(v, 'p50 %.3f p99 %.2f first2 %.2f %.2f slow %d tok/s %.0f' % (p, o['tbt_ms_p99'], t[0], t[1], sum(x>2*p for x in t), o['tokens_per_s']))
PY
rm -rf $R
