#!/bin/bash
# Session 26, call 8: hgca-decode's default run, the start of the session (736a13d, .device/pre)
# against its end (the CUDA runtime's fixes for captured steps, errors reported once, host-call
# slots of captured calls reused: .device/bin), alternated, 4 runs each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH
for i in 1 2 3 4; do
  for b in pre bin; do
    timeout 30 $D/$b/hgca-decode --json > /tmp/d-$b-$i.json 2>/dev/null || echo "$b $i failed"
    python3 -c "import json; d=json.load(open('/tmp/d-$b-$i.json')); print('$b', $i, 'p50 %.3f ms p99 %.3f ms transfer share %.3f' % (d['tbt_ms_p50'], d['tbt_ms_p99'], d['transfer_share']))"
  done
done
