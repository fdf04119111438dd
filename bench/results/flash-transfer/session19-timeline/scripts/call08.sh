#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/ph; mkdir -p $R
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
for r in 1 2; do for v in ph phiso; do
  HGCA_TIMELINE=$R/${v}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1
done; done
cd $OUT && tar czf ph.tgz ph && rm -rf ph
