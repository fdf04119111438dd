#!/bin/bash
# Session 33, call 1: FlashD2H into grown (steady), grown varied-MAW and fresh stores at 8, 16 and
# 32 layers, staging slots 8-16 (experimental registrations x_steady, x_varied, x_fresh), with the
# copy alone and the pool scatter (the VM's health); 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call1; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/x_(steady|varied|fresh)/'
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 170 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
cat $R/machine.txt
cd $OUT && tar czf call1.tgz call1 && python3 - call1 <<'PY'
import json,sys,glob
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/r*.json')):
  for b in json.load(open(f)).get('benchmarks',[]):
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'), n.split('slots:')[1].split('/')[0])
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][0],int(kv[0][1]) if kv[0][1]!='-' else 0,int(kv[0][2]))): print(*k, *v)
PY
rm -rf call1
