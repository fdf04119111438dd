#!/bin/bash
# Session 48, call 7 (the working tree in .device/commit; one H200): the GPU sparse attention for appends
# with K/V in device memory (as after a FlashH2D gather) and read in place from context-cache
# segments in mapped pinned memory (as the overflow policy's GPU path reads them), 16/128/512 rows,
# 10 % of 32K selected, Hkv 8, G 4, D 128, bf16; and decode over host segments at batch 16 (the
# link's rate for this kernel). For the cost model's GPU price of a moved append item.
CALL=${CALL:-call7}; source bench/results/session48/scripts/common.sh
timeout 300 $D/bin/hgca_bench_gpu_sparse --benchmark_filter='BM_SparseAppend|BM_SparseDecodeHost/batch:16/context:32768/segments:1' \
  --benchmark_out=$R/sparse.json --benchmark_out_format=json > $R/sparse.txt 2>&1; echo "bench rc=$?"
python3 - $R <<'PY' | tee $R/table.txt
import json, sys
for b in json.load(open(sys.argv[1] + "/sparse.json"))["benchmarks"]:
    c = {k: v for k, v in b.items() if isinstance(v, (int, float))}
    print(f"{b['name'].split('/iterations')[0]:52s} us {c.get('us', b['real_time']):9.1f} kv_MB {c.get('kv_MB', 0):6.1f} "
          f"row_GBps {c.get('row_GBps', 0):8.1f} kv_GBps {c.get('kv_GBps', 0):7.1f} tile_pairs {c.get('tile_pairs', 0):.0f} tiles {c.get('tiles', 0):.0f} splits {c.get('kv_splits', 0):.0f}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
