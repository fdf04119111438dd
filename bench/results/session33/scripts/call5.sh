#!/bin/bash
# Session 33, call 5 (8b15971, "new"; old: 982d80f): the host's CPU health (the pool scatter);
# the GPU suite and model tests; hgca-decode's default
# run, old and new alternating, 3 rounds; FlashD2H into the stores at the runtime's slot counts,
# old and new alternating, 4 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null || true
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
$D/bin/new/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_pool/block_KB:16/slots:4/' --benchmark_format=json 2>/dev/null | python3 -c "import json,sys; print('health: flash_pool %.1f GB/s' % json.load(sys.stdin)['benchmarks'][0]['GBps_median'])"
timeout 200 $D/bin/new/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 60 $D/bin/new/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
for f in gpu_tests model_tests; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$f.log | tr '\n' ' ')"; done
grep -E "^\[  FAILED  \]" $R/*.log | head
for r in 1 2 3; do for b in old new; do
  timeout 40 $D/bin/$b/hgca-decode --json > $R/decode-$b-r$r.json 2> $R/decode-$b-r$r.err || echo "decode $b r$r failed"
done; done
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4/threads:0/selected_pct:10/layers:(1|2)|8/threads:0/selected_pct:10/layers:(4|16|32)|9/threads:0/selected_pct:10/layers:8)/laps:4'
for r in 1 2 3 4; do for b in old new; do
  timeout 100 $D/bin/$b/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "$b round $r failed"
done; done
cat $R/machine.txt
cd $OUT && tar czf call5.tgz call5 && python3 - call5 <<'PY'
import json,sys,glob
R=sys.argv[1]
for b in ('old','new'):
  xs=[]
  for f in sorted(glob.glob(R+'/decode-%s-r*.json'%b)):
    try:
      j=json.loads(open(f).read().strip().splitlines()[-1]); xs.append('p50 %.3f p99 %.3f ms, transfer %.3f' % (j['tbt_ms_p50'], j['tbt_ms_p99'], j['transfer_share']))
    except Exception as e: xs.append('?')
  print('decode', b, ' | '.join(xs))
rows={}
for f in sorted(glob.glob(R+'/*-r*.json')):
  a=f.split('/')[-1].split('-')[0]
  if a not in ('old','new'): continue
  for b in json.load(open(f)).get('benchmarks',[]):
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'), n.split('slots:')[1].split('/')[0], a)
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][0],int(kv[0][1]) if kv[0][1]!='-' else 0,int(kv[0][2]),kv[0][3]!='old')): print(*k, *v)
PY
rm -rf call5
