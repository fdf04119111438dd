#!/bin/bash
# Session 33, call 9 (c538d4c, the library of 8b15971; an H200 host asked for): FlashD2H end to end into the stores at 1-32 layers (the runtime's
# slot counts, and 16 slots at 8-32 layers), with its peers in the same process (the copies alone,
# one cudaMemcpyAsync per block, cudaMemcpyBatchAsync) and the compute-bound kernel beside it; 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call9; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/(flash_copy_only|memcpy_per_block|memcpy_batch)/block_KB:16/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:[0-9]+/laps:4|BM_Compute/'
for r in 1 2 3; do
  t0=$(date +%s)
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
  echo "round $r $(( $(date +%s) - t0 )) s"
done
cat $R/machine.txt
cd $OUT && tar czf call9.tgz call9 && python3 - call9 <<'PY'
import json,sys,glob
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/r*.json')):
  for b in json.load(open(f)).get('benchmarks',[]):
    n=b['name']
    if n.startswith('BM_Compute'):
      rows.setdefault((n.split('/')[1],'-','-'),[]).append('%.2fms'%b['real_time']); continue
    n=n.replace('BM_D2H/','')
    k=(n.split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'), (n.split('slots:')[1].split('/')[0] if 'slots:' in n else '-'))
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median', b.get('bytes_per_second',0)/1e9))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][0],int(kv[0][1]) if kv[0][1]!='-' else 0,int(kv[0][2]) if kv[0][2]!='-' else 0)): print(*k, *v)
PY
rm -rf call9
