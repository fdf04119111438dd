#!/bin/bash
# Session 13, call 4: FlashD2H into the stores, main (4fc73b1, bt_base) against context-cache
# appends streamed like the store rows (bt_new), alternated, 3 rounds. HGCA_BENCH_STORE_WRITES
# unset: auto.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
F='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:1/|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2 3; do for v in base new; do
  timeout 150 $B/bt_$v --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
cd $R && tar czf json.tgz *.json && rm -f *.json && cd - > /dev/null
python3 $D/summary.py $R | tee $R/summary.txt
