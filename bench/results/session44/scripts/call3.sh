#!/bin/bash
# Session 44, call 3 (the commit in .device/commit): the allocation-failure programs after oneTBB's
# own allocations stopped being chosen (20 and 10 runs); the engine at 16 threads with the paired
# ratio (call 2's bench lacked libbenchmark on the device), between two runs of PyTorch's CPU SDPA.
CALL=${CALL:-call3}; source bench/results/session44/scripts/common.sh
for t in hgca_alloc_tests:20 hgca_gpu_alloc_tests:10; do
  p=${t%%:*}; runs=${t##*:}; ok=0
  for i in $(seq 1 $runs); do
    if timeout 60 $D/dbg/$p > $R/$p-$i.log 2>&1; then ok=$((ok + 1)); rm $R/$p-$i.log; fi
  done; echo "$p: $ok of $runs runs passed"
done | tee $R/summary.txt
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:(4|1)/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
python3 bench/results/session38/scripts/engine_table.py $R
python3 - $R/engine-r1.json <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))['benchmarks']:
    print(b['name'].split('/min_time')[0], b.get('label', ''), 'paired %.3f (min %.3f)' % (b['ratio_paired_median'], b['ratio_paired_min']))
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
