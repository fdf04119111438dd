#!/bin/bash
# Session 33, call 2 (982d80f + the bench's warm store memory at 128 chunks): FlashD2H into the
# stores at 8, 16, 32 layers, the new rule's slots (9, 8, 8) against 16, with glibc's malloc and
# with oneTBB's scalable allocator preloaded (libtbbmalloc_proxy), alternating, 3 rounds; then
# session 31's CPU-only scatter harness (fresh_steady) at 16 layers, both allocators.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:(8|16|32)/'
for r in 1 2 3; do
  for a in glibc tbb; do
    t0=$(date +%s)
    P=; [ $a = tbb ] && P=$PWD/$D/lib/libtbbmalloc_proxy.so.2
    LD_PRELOAD=$P timeout 120 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/$a-r$r.json > /dev/null 2>&1 || echo "$a round $r failed"
    echo "$a round $r $(( $(date +%s) - t0 )) s"
  done
done
for a in glibc tbb; do
  P=; [ $a = tbb ] && P=$PWD/$D/lib/libtbbmalloc_proxy.so.2
  echo "== fresh_steady 16 threads, 128 steps, 16 layers, $a"
  LD_PRELOAD=$P timeout 60 $D/bin/fresh_steady 16 128 2 auto 16 > $R/harness-$a.txt 2>&1 || echo "harness $a failed"
  grep "round" $R/harness-$a.txt
done
cat $R/machine.txt
cd $OUT && tar czf call2.tgz call2 && python3 - call2 <<'PY'
import json,sys,glob
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/*-r*.json')):
  a=f.split('/')[-1].split('-')[0]
  for b in json.load(open(f)).get('benchmarks',[]):
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'), n.split('slots:')[1].split('/')[0], a)
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0) + ('' if 'sync_growths' not in b else '(s%.0f)'%b['sync_growths']))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][0],int(kv[0][1]) if kv[0][1]!='-' else 0,int(kv[0][2]),kv[0][3])): print(*k, *v)
PY
rm -rf call2
