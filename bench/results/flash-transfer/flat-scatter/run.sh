#!/bin/bash
# Session 15 (call 2: with per-head state on cache lines of its own; call 4: begin and end in parallel loops too): the store scatter as one flat loop over (sequence, run of KV heads) (bt_flat, bs_flat)
# against main f5ef959 (bt_base, bs_base), alternated, 3 rounds. 16 KB blocks, 10 % selected.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R; rm -f $R/*
F='BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:1|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0'
S='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/selected_pct:10'
for r in 1 2 3; do for v in base flat; do
  timeout 150 $B/bt_$v --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/bt_${v}_$r.json > /dev/null 2>&1 || echo "bt $v $r failed"
  timeout 60 $B/bs_$v --benchmark_filter="$S" --benchmark_repetitions=3 --benchmark_format=json --benchmark_out=$R/bs_${v}_$r.json > /dev/null 2>&1 || echo "bs $v $r failed"
done; done
python3 bench/results/flash-transfer/flat-scatter/summary.py $R | tee $R/summary.txt
(cd $R && tar czf json.tgz *.json && rm -f *.json)
