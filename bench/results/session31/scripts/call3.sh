#!/bin/bash
# Session 31, call 3: store writes auto against streamed: the store scatter alone (CPU, instrumented),
# FlashD2H into fresh and steady stores (1 and 8 layers), and hgca-decode's default run; alternated.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for w in streamed auto; do timeout 60 $D/bin/fresh_steady_instr 16 64 4 $w > $R/instr_$w.txt; done
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|16)/threads:0/selected_pct:10/layers:(1|8)/laps:4/"
for r in 1 2; do for w in auto streamed; do
  HGCA_BENCH_STORE_WRITES=$w timeout 100 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/xfer_${w}_r$r.json > /dev/null 2>&1 || echo "xfer $w $r failed"
done; done
for r in 1 2 3 4; do for w in auto streamed; do
  timeout 60 $D/bin/hgca-decode --json --store-writes $w > $R/decode_${w}_r$r.json 2> $R/decode_${w}_r$r.err || echo "decode $w $r failed"
done; done
python3 - <<'PY'
import json, glob, os, re
R=os.environ['OUT']+'/call3'
for f in sorted(glob.glob(R+'/instr_*.txt')):
    print(os.path.basename(f)); print(''.join(l for l in open(f) if 'round' in l))
for f in sorted(glob.glob(R+'/xfer_*.json')):
    d=json.load(open(f))
    print(os.path.basename(f), ' '.join('%s:%.1f' % (re.sub(r'BM_D2H/|/block_KB:16|/threads:0/selected_pct:10|/laps:4.*','',b['name']), b['GBps_median']) for b in d['benchmarks']))
for w in ['auto','streamed']:
    ps=[]
    for f in sorted(glob.glob(R+'/decode_%s_r*.json'%w)):
        try:
            j=json.load(open(f)); ps.append(j)
        except Exception as e: print(f, e)
    print(w, 'p50 ms', ' '.join('%.3f' % j['tbt_ms_p50'] for j in ps), '| p99', ' '.join('%.3f' % j['tbt_ms_p99'] for j in ps), '| prefill s', ' '.join('%.3f' % j['prefill_s'] for j in ps), '| share', ' '.join('%.3f' % j['transfer_share'] for j in ps))
PY
