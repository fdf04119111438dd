#!/bin/bash
# Session 8: FlashD2H into the stores with 50 % and 10 % of the evicted entries selected.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT/r; mkdir -p $R
for i in 1 2; do
  timeout 150 $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/|BM_D2H/memcpy_batch/block_KB:16/' --benchmark_format=json --benchmark_out=$R/store_$i.json > /dev/null 2>&1; echo "run $i rc=$?"
done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]
for i in (1, 2):
    for b in json.load(open(f"{R}/store_{i}.json"))["benchmarks"]:
        print(i, b["name"].split("/iter")[0], f'{b["GBps_median"]:.1f} GB/s (copy {b.get("copy_GBps", 0):.1f}, scatter {b.get("scatter_GBps", 0):.1f}) selected {b.get("selected_fraction", 0):.3f}')
PY
(cd $OUT && tar czf results.tgz r && rm -rf r)
