#!/bin/bash
# Session 31, dev machine (2 vCPUs of an AMD EPYC, Zen 4): the engine from DRAM, 0fe7f6c's kernel
# (BASE) against 7eb174f's (NEW: full chunks known at compile time), alternating, 2 rounds.
out=${OUT:-bench/results/session31/dev}; mkdir -p $out
filter='BM_Decode/threads:(0|1)/isa:4|BM_Decode/threads:0|BM_DecodeVaried'
for r in 1 2; do
  for b in base new; do
    bin=$BASE; [ $b = new ] && bin=$NEW
    HGCA_BENCH_WS_MB=1536 $bin --benchmark_filter="$filter" --benchmark_format=json --benchmark_out=$out/dram-$b-r$r.json > /dev/null
  done
done
