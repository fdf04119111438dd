#!/bin/bash
# Session 33, call 7: hgca-decode at 32 layers with 8 MiB prefill calls (session 32 call 5's
# workload: 4 x 512 tokens x 8 KV heads x 128 x bf16 x K,V per call, fresh stores), old (982d80f,
# the C library's allocator) against new (d24aef1, the store's containers in oneTBB's), alternating, 4 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call7; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
W="--layers 32 --q-heads 8 --kv-heads 8 --head-dim 128 --batch 4 --context 2048 --chunk 512 --window-blocks 4 --decode-steps 8"
for r in 1 2 3 4; do for b in old new; do
  t0=$(date +%s)
  timeout 40 $D/bin/$b/hgca-decode $W --json > $R/decode-$b-r$r.json 2> $R/decode-$b-r$r.err || echo "decode $b r$r failed"
  echo "decode $b round $r: $(( $(date +%s) - t0 )) s"
done; done
cat $R/machine.txt
cd $OUT && tar czf call7.tgz call7 && python3 - call7 <<'PY'
import json,sys,glob,statistics
R=sys.argv[1]
for b in ('old','new'):
  p=[];t=[]
  for f in sorted(glob.glob(R+'/decode-%s-r*.json'%b)):
    try:
      j=json.loads(open(f).read().strip().splitlines()[-1]); p.append(j['prefill_s']); t.append(j['tbt_ms_p50'])
    except Exception: pass
  print(b, 'prefill_s', ' '.join('%.3f'%x for x in p), 'median %.3f'%statistics.median(p) if p else '', '| tbt p50 ms', ' '.join('%.2f'%x for x in t))
PY
rm -rf call7
