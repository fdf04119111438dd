#!/bin/bash
# Session 12, call 1: the merge gated (queued behind a gate the host opens, as in a decode step) and
# on an idle stream; FlashH2D against its peers; FlashD2H into the stores over 1 and 4 laps (256 MB /
# 1 GB per iteration), main against main + context-row prefetch (bt_prefetch), alternated, 2 rounds.
# (The store rows' filter ended in `$`, which no benchmark name matches: only flash_pool and the
# peers ran in this call's D2H part; call 2 repeats it with the filter fixed.)
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
for p in 1 2; do
  timeout 60 $B/hgca_bench_layer --benchmark_filter='BM_Merge(ZeroCopy|FloorEmpty)' --benchmark_format=json --benchmark_out=$R/merge_$p.json > /dev/null 2>&1; echo "merge $p rc=$?"
done
for p in 1 2; do
  timeout 120 $B/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash/block_KB:(4|16|64)/SMs:8|memcpy_batch/|memcpy_per_block/)' --benchmark_format=json --benchmark_out=$R/h2d_$p.json > /dev/null 2>&1; echo "h2d $p rc=$?"
done
F='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:(1|4)$|BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:(1|4)$|BM_D2H/flash_pool/block_KB:16/slots:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_D2H/memcpy_per_block/block_KB:16/'
for rep in 1 2; do for v in main prefetch; do
  b=$B/hgca_bench_transfer; [ $v = prefetch ] && b=$B/bt_prefetch
  timeout 150 $b --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/d2h_${v}_$rep.json > /dev/null 2>&1; echo "d2h $v $rep rc=$?"
done; done
# (then: tar the JSON, print summary.txt with the same python as call 2's run.sh)
