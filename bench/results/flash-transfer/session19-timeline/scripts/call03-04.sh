#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/tl; mkdir -p $R
S='BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/'
P='BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0/'
for r in 1 2; do
  HGCA_TIMELINE=$R/r$r $B/bt_tl --benchmark_filter="$S|$P" --benchmark_format=json --benchmark_out=$R/r$r.json 2>&1 | grep -E "^BM_" | sed -E 's/ +/ /g' | cut -c1-250
done
cd $OUT && tar czf tl.tgz tl && rm -rf tl
