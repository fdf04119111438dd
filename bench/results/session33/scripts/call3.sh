#!/bin/bash
# Session 33, call 3: the store's containers in oneTBB's scalable allocator (new) against the C
# library's (old: 982d80f; both with the bench's warm store memory at 128 chunks). FlashD2H into
# the stores, every registered 16 KB / 10 % / 4-lap row, the binaries alternating, 3 rounds; the
# CPU-only scatter harness at 1, 8, 16 layers; the allocation-failure sweep on the GPU.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt; lscpu | grep -i "model name\|L3" >> $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:[0-9]+/laps:4'
for r in 1 2 3; do
  for b in old new; do
    t0=$(date +%s)
    timeout 100 $D/bin/$b/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "$b round $r failed"
    echo "$b round $r $(( $(date +%s) - t0 )) s"
  done
done
for L in 1 8 16; do for b in old new; do
  echo "== fresh_steady 16 threads, 128 steps, $L layers, $b"
  timeout 60 $D/bin/$b/fresh_steady 16 128 2 auto $L > $R/harness-$b-$L.txt 2>&1 || echo "harness $b $L failed"
  grep "round" $R/harness-$b-$L.txt
done; done
timeout 120 $D/bin/new/hgca_gpu_alloc_tests > $R/gpu_alloc_tests.txt 2>&1; echo "gpu alloc tests rc $?"; tail -3 $R/gpu_alloc_tests.txt
cat $R/machine.txt
cd $OUT && tar czf call3.tgz call3 && python3 - call3 <<'PY'
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
rm -rf call3
