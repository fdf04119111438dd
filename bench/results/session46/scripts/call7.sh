#!/bin/bash
# Session 46, call 7 (the commit in .device/commit; one H200): issue 4's load balance per step (the slowest
# worker's busy time over the mean of each step, median and worst) on the varied-length rows, 16 threads.
CALL=${CALL:-call7}; source bench/results/session46/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 300 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:4/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
python3 - $R <<'PY'
import json, sys
for b in json.load(open(sys.argv[1] + "/engine-r1.json"))["benchmarks"]:
    print(f"{b['name'].split('/min_time')[0]:42s} engine {b['engine_GBps']:6.1f}  ratio {b['ratio_to_dram']:.3f}  "
          f"busy max/mean summed {b['busy_max_over_mean']:.4f}  per step median {b['busy_max_over_mean_step_median']:.4f} "
          f"worst {b['busy_max_over_mean_step_worst']:.4f}  steps {b['iterations']}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
