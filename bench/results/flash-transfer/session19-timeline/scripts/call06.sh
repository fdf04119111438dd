#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/seq; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
for r in 1 2 3; do
  HGCA_TIMELINE=$R/r$r $B/bt_tl --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1
done
grep -h "steal\|^cpu " /proc/stat | head -2
cd $OUT && tar czf seq.tgz seq && rm -rf seq
