#!/bin/bash
# Session 30, dev machine (2 vCPUs of an AMD EPYC, Zen 4): the CPU engine's decode kernels, builds
# alternating. BASE: hgca_bench_cpu built at 08264ff (64-key blocks); NEW: at 72b0222 (16-key
# decode blocks); NEW2: at 93444b0 (and the conditional rescale).
out=${OUT:-bench/results/session30/dev}; mkdir -p $out
filter='BM_Decode/threads:(0|1)/isa:4|BM_Decode/threads:0|BM_DecodeVaried'
# 1. 64- against 16-key blocks from DRAM (dev-*), 3 rounds.
for r in 1 2 3; do
  for b in base new; do
    bin=$BASE; [ $b = new ] && bin=$NEW
    HGCA_BENCH_WS_MB=1536 $bin --benchmark_filter="$filter" --benchmark_format=json --benchmark_out=$out/dev-$b-r$r.json > /dev/null
  done
done
# 2. The new build from cache (8 MB of K+V: 8 heads x 2048 keys, in L3): its compute's ceiling (cache-new-*).
for r in 1 2 3 4; do
  HGCA_BENCH_WS_MB=8 $NEW --benchmark_filter='BM_Decode/threads:(0|1)/isa:(4|1)/dtype:2' \
    --benchmark_format=json --benchmark_out=$out/cache-new-r$r.json > /dev/null
done
# 3. Without and with the conditional rescale, from DRAM (dev2-*) and from cache (cache2-*), 3 rounds.
for r in 1 2 3; do
  for b in new new2; do
    bin=$NEW; [ $b = new2 ] && bin=$NEW2
    HGCA_BENCH_WS_MB=1536 $bin --benchmark_filter="$filter" --benchmark_format=json --benchmark_out=$out/dev2-$b-r$r.json > /dev/null
  done
done
for r in 1 2 3; do
  for b in new new2; do
    bin=$NEW; [ $b = new2 ] && bin=$NEW2
    HGCA_BENCH_WS_MB=8 $bin --benchmark_filter='BM_Decode/threads:(0|1)/isa:(4|1)/dtype:2' \
      --benchmark_format=json --benchmark_out=$out/cache2-$b-r$r.json > /dev/null
  done
done
