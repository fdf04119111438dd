#!/bin/bash
# Session 46, call 6 (the commit in .device/commit; one H200): issue 4's decode rows with the stronger DRAM
# read beside them (fastest of the plain read and AVX-512 reads prefetching 1 or 4 KiB ahead), 16 threads.
CALL=${CALL:-call6}; source bench/results/session46/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 300 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:(4|1)/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
python3 - $R <<'PY'
import json, sys
for b in json.load(open(sys.argv[1] + "/engine-r1.json"))["benchmarks"]:
    print(f"{b['name'].split('/min_time')[0]:42s} engine {b['engine_GBps']:6.1f}  read {b['dram_read_GBps']:6.1f}  "
          f"ratio {b['ratio_to_dram']:.3f}  paired median {b['ratio_paired_median']:.3f} min {b['ratio_paired_min']:.3f}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
