#!/bin/bash
# Session 31, call 4: (1) hgca-decode with stores between a quarter of the L3 and the L3, bulk rows
# cached against streamed; (2) FlashD2H into fresh and steady stores, main (auto streams above the
# L3) against a build whose auto streams above a quarter of it (xfer_q); alternated.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
A="--q-heads 32 --kv-heads 8 --head-dim 128 --batch 1 --chunk 512 --json"
for r in 1 2 3; do
  for cfg in "M --layers 8 --context 2048" "L --layers 8 --context 4096" "XL --layers 16 --context 4096"; do
    set -- $cfg; name=$1; shift
    for w in cached streamed; do
      timeout 60 $D/bin/hgca-decode $A "$@" --store-writes $w > $R/dec_${name}_${w}_r$r.json 2>/dev/null || echo "dec $name $w $r failed"
    done
  done
done
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|16)/threads:0/selected_pct:10/layers:(1|8)/laps:4/"
for r in 1 2 3; do for b in hgca_bench_transfer xfer_q; do
  timeout 100 $D/bin/$b --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/x_${b}_r$r.json > /dev/null 2>&1 || echo "xfer $b $r failed"
done; done
python3 - <<'PY'
import json, glob, os, re
R=os.environ['OUT']+'/call4'
for name in ['M','L','XL']:
    for w in ['cached','streamed']:
        js=[json.load(open(f)) for f in sorted(glob.glob(R+'/dec_%s_%s_r*.json'%(name,w)))]
        if js: print('%-2s %-8s used %4.0f MB  p50 %s  prefill %s' % (name, w, js[0]['store_memory']['used_bytes']/1e6, ' '.join('%.3f'%j['tbt_ms_p50'] for j in js), ' '.join('%.2f'%j['prefill_s'] for j in js)))
for b in ['hgca_bench_transfer','xfer_q']:
    for f in sorted(glob.glob(R+'/x_%s_r*.json'%b)):
        d=json.load(open(f))
        print('%-20s'%b, ' '.join('%s:%.1f' % (re.sub(r'BM_D2H/|/block_KB:16|/threads:0/selected_pct:10|/laps:4.*','',x['name']), x['GBps_median']) for x in d['benchmarks']))
PY
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
