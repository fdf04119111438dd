#!/bin/bash
# Session 5, last call: main with the half-thread background arena: GPU tests, model tests, memcheck
# of the runtime's graph/async/FlashD2H tests, and more hgca-decode rounds against 518db6c.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT/r; mkdir -p $R
timeout 200 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $R/gpu_tests.log | head -12
timeout 30 $B/hgca_gpu_model_tests > $R/gpu_model.log 2>&1; echo "model rc=$?"; grep -E "FAILED|PASSED" $R/gpu_model.log | head -4
timeout 80 compute-sanitizer --tool memcheck $B/hgca_gpu_tests --gtest_filter='CudaGraph.*:CudaAsync.*:*NothingLost*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" $R/memcheck.log | head -5
for round in 1 2 3 4; do
  timeout 30 $B/hgca-decode-base --json 2>/dev/null >> $R/decode_base_t0.jsonl
  timeout 30 $B/hgca-decode --json 2>/dev/null >> $R/decode_new_t0.jsonl
  timeout 30 $B/hgca-decode --json --cuda-wait blocking 2>/dev/null >> $R/decode_new_blocking.jsonl
done
(cd $OUT && tar czf results.tgz r)
python3 - <<'PY'
import json, os
R=os.environ['OUT']+'/r'
for v in ['base_t0','new_t0','new_blocking']:
    dec=json.JSONDecoder(); s=open(f'{R}/decode_{v}.jsonl').read(); i=0
    while True:
        s2=s[i:].lstrip()
        if not s2: break
        o,n=dec.raw_decode(s2); i=len(s)-len(s2)+n
        t=o['tbt_ms']; p=o['tbt_ms_p50']
        print(v, 'p50 %.3f p99 %.2f first2 %.2f %.2f slow %d share %.3f tok/s %.0f' % (p, o['tbt_ms_p99'], t[0], t[1], sum(x>2*p for x in t), o['transfer_share'], o['tokens_per_s']))
PY
rm -rf $R
