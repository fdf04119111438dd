#!/bin/bash
# Session 32, call 3: FlashD2H into the stores, staging slots against layers (experimental
# registrations x_steady at 8, 16, 32 layers), with the copy alone and the pool scatter (the VM's CPU health); 8 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/x_steady/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:(8|16|32)/'
for r in 1 2 3 4 5 6 7 8; do
  t0=$(date +%s)
  timeout 250 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json,sys,glob,re
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/r*.json')):
  for b in json.load(open(f))['benchmarks']:
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], n.split('slots:')[1].split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'))
    rows.setdefault(k,[]).append('%.1f(c%.1f s%.1f)'%(b.get('GBps_median',0),b.get('copy_GBps',0),b.get('scatter_GBps',0)))
for k,v in rows.items(): print(*k, *v)
PY
cat $R/machine.txt
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
