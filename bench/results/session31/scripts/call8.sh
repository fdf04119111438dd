#!/bin/bash
# Session 31, call 8: call 7's FlashD2H rows again (main 0fe7f6c against the context caches'
# spans allocated per size), the builds in ABBA order (old new, new old, twice) to cancel drift.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call8; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:(4|8|16|32)/threads:0/selected_pct:10/layers:(1|4|8|16)/laps:4/"
for r in 1 2 3 4; do bs="xfer_old xfer_new"; [ $((r % 2)) = 0 ] && bs="xfer_new xfer_old"; for b in $bs; do
  t0=$(date +%s)
  timeout 100 $D/bin/$b --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/x_${b}_r$r.json > /dev/null 2>&1 || echo "xfer $b $r failed"
  echo "$b r$r $(( $(date +%s) - t0 )) s"
done; done
python3 - <<'PY'
import json, glob, os, re, statistics
R=os.environ['OUT']+'/call8'
rows={}
for b in ['xfer_old','xfer_new']:
    for f in sorted(glob.glob(R+'/x_%s_r*.json'%b)):
        for x in json.load(open(f))['benchmarks']:
            n=re.sub(r'BM_D2H/|/block_KB:16|/threads:0/selected_pct:10|/laps:4.*','',x['name'])
            rows.setdefault(n,{}).setdefault(b,[]).append(x['GBps_median'])
print('%-40s %-22s %-22s %s' % ('FlashD2H GB/s', 'old (per round)', 'new (per round)', 'new/old medians'))
for n,v in rows.items():
    o=v.get('xfer_old',[]); w=v.get('xfer_new',[])
    print('%-40s %-22s %-22s %.3f' % (n, ' '.join('%.1f'%x for x in o), ' '.join('%.1f'%x for x in w), statistics.median(w)/statistics.median(o) if o and w else 0))
PY
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
