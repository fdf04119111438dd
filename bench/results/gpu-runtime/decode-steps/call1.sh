#!/bin/bash
# Session 5, final call: merged main (d2h-fast's scatter, blocks allocated at capture, re-evaluations
# in a low-priority arena, hgca-decode --cuda-wait). Tests, memcheck, hgca-decode A/B.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 100 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaOverflow*:CudaAsync.*:*FlashRoundTrip*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
for round in 1 2 3; do
  timeout 20 $B/hgca-decode-base --json 2>/dev/null >> $R/decode_base.jsonl
  timeout 20 $B/hgca-decode --json 2>/dev/null >> $R/decode_auto.jsonl
  timeout 20 $B/hgca-decode --json --cuda-wait blocking 2>/dev/null >> $R/decode_blocking.jsonl
  timeout 20 $B/hgca-decode --json --cuda-wait spin 2>/dev/null >> $R/decode_spin.jsonl
done
echo "decode done"
(cd $OUT && tar czf results.tgz r)
python3 - <<'PY'
import json, os
R=os.environ['OUT']+'/r'
for v in ['base','auto','blocking','spin']:
    dec=json.JSONDecoder(); s=open(f'{R}/decode_{v}.jsonl').read(); i=0; rows=[]
    while True:
        s2=s[i:].lstrip()
        if not s2: break
        o,n=dec.raw_decode(s2); i=len(s)-len(s2)+n
        t=sorted(o['tbt_ms']); rows.append((o['tbt_ms_p50'], o['tbt_ms_p99'], max(t), sum(x>2*o['tbt_ms_p50'] for x in t), o['transfer_share'], o['tokens_per_s']))
    for r in rows: print(v, 'p50 %.3f p99 %.2f max %.2f slow %d share %.3f tok/s %.0f' % r)
PY
rm -rf $R
