#!/bin/bash
# Session 44, call 2 (f575aef): the test programs after the kernels' scratch and 64-bit offsets
# change; the allocation-failure programs (unstripped, so that a failure's printed stack can be read)
# 15 times each; the engine at 16 threads with the paired ratio, against PyTorch's CPU SDPA.
CALL=${CALL:-call2}; source bench/results/session44/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_gpu_tests hgca_gpu_model_tests; do
  t0=$(date +%s); timeout 300 $D/bin/$t > $R/$t.log 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done | tee $R/summary.txt
for t in hgca_alloc_tests hgca_gpu_alloc_tests; do
  ok=0; for i in $(seq 1 15); do
    if timeout 60 $D/dbg/$t > $R/$t-$i.log 2>&1; then ok=$((ok + 1)); rm $R/$t-$i.log; fi
  done; echo "$t: $ok of 15 runs passed"
done | tee -a $R/summary.txt
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 240 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:(4|1)/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
python3 bench/results/session38/scripts/engine_table.py $R
python3 - $R/engine-r1.json <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))['benchmarks']:
    print(b['name'].split('/min_time')[0], b.get('label', ''), 'read %.1f engine %.1f ratio %.3f paired %.3f (min %.3f) busy %.3f' % (
        b['dram_read_GBps'], b['engine_GBps'], b['ratio_to_dram'], b['ratio_paired_median'], b['ratio_paired_min'], b.get('busy_max_over_mean', 0)))
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
