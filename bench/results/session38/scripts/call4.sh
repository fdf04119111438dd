#!/bin/bash
# Session 38, call 4 (the library after the review fixes): the test programs whose code changed
# (lse_out overlap, abort_step, the C ABI), issue 4's engine rows on all 16 threads (1 round) with
# PyTorch's CPU SDPA over the same subset before and after, and hgca-tune's full sweep with the
# measurements going round the workload's layers (its table, best configuration and plot).
CALL=${CALL:-call4}; source bench/results/session38/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s"
done
export HGCA_BENCH_WS_MB=4096
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 120 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried/' \
  --benchmark_format=json --benchmark_out=$R/engine-r1.json > /dev/null 2> $R/engine-r1.err || echo "engine failed"
timeout 70 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
t0=$(date +%s)
timeout 200 $D/bin/hgca-tune --out $R/hgca-config.json --svg $R/hgca-tune.svg > $R/hgca-tune.txt 2> $R/hgca-tune.err || echo "hgca-tune failed"
echo "hgca-tune $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf $CALL.tgz $CALL
for f in $CALL/*.log; do echo "$(basename $f): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $f | tr '\n' ' ')"; done
python3 "$OLDPWD/bench/results/session38/scripts/engine_table.py" $CALL
tail -22 $CALL/hgca-tune.txt; cat $CALL/hgca-tune.err | tail -3
cat $CALL/machine.txt; rm -rf $CALL
