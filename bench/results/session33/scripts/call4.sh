#!/bin/bash
# Session 33, call 4: call 3's comparison again, the same binaries (old: 982d80f, the C library's
# allocator; new: the store's containers in oneTBB's scalable allocator), FlashD2H rows only, the
# binaries alternating, 6 rounds (call 3's host was noisy).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:[0-9]+/laps:4'
for r in 1 2 3 4 5 6; do
  for b in old new; do
    t0=$(date +%s)
    timeout 100 $D/bin/$b/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "$b round $r failed"
    echo "$b round $r $(( $(date +%s) - t0 )) s"
  done
done
cat $R/machine.txt
cd $OUT && tar czf call4.tgz call4 && python3 - call4 <<'PY'
import json,sys,glob
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/*-r*.json')):
  a=f.split('/')[-1].split('-')[0]
  for b in json.load(open(f)).get('benchmarks',[]):
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'), n.split('slots:')[1].split('/')[0], a)
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][0],int(kv[0][1]) if kv[0][1]!='-' else 0,int(kv[0][2]),kv[0][3]!='old')): print(*k, *v)
PY
rm -rf call4
