#!/bin/bash
# Session 32, call 5 (0e43ee2): guest memory touched first; FlashD2H into the stores at 16 and 32
# layers, the runtime's 16 slots against 2 per layer, 4 rounds; hgca-decode at 32 layers with
# 8 MiB prefill calls (4 x 512 tokens x 8 KV heads x 128 x bf16 x K,V), the default 128 MiB of
# staging (16 slots) against 2 slots per layer (--staging-mib 100000), alternating, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:(16|32)/'
for r in 1 2 3 4; do
  t0=$(date +%s)
  timeout 100 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/xfer-r$r.json > /dev/null 2>&1 || echo "xfer round $r failed"
  echo "xfer round $r $(( $(date +%s) - t0 )) s"
done
W="--layers 32 --q-heads 8 --kv-heads 8 --head-dim 128 --batch 4 --context 2048 --chunk 512 --window-blocks 4 --decode-steps 8"
ok=1
for r in 1 2 3; do
  for mib in 128 100000; do
    [ $ok = 1 ] || break
    t0=$(date +%s)
    timeout 40 $D/bin/hgca-decode $W --staging-mib $mib --json > $R/decode-$mib-r$r.json 2> $R/decode-$mib-r$r.err || { echo "decode $mib r$r failed"; ok=0; }
    echo "decode staging $mib MiB round $r: $(( $(date +%s) - t0 )) s"
  done
done
python3 - $R <<'PY'
import json,sys,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/decode-*.json')):
  try:
    j=json.loads(open(f).read().strip().splitlines()[-1])
    print(f.split('/')[-1], 'prefill_s %.3f tbt_p50 %.3f transfer_share %s staging %d' % (j['prefill_s'], j['tbt_ms_p50'], j['transfer_share'], j['staging_limit_bytes']))
  except Exception as e: print(f.split('/')[-1], 'unreadable', e)
rows={}
for f in sorted(glob.glob(R+'/xfer-r*.json')):
  for b in json.load(open(f))['benchmarks']:
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], n.split('slots:')[1].split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'))
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0))
for k,v in rows.items(): print(*k, *v)
PY
cat $R/machine.txt
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
