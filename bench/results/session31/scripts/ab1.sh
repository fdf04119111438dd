#!/bin/bash
# Session 31, dev machine: hgca_bench_cpu builds (scripts/variant.py) from cache, one thread, bf16
# vdpbf16ps; engine GB/s and cycles a key at the measured 3.64 GHz. Paths as they were on the dev machine.
rounds=$1; shift
for r in $(seq $rounds); do for b in "$@"; do
  HGCA_BENCH_WS_MB=2 /work/exp/bins/$b --benchmark_filter='BM_Decode/threads:1/isa:4/dtype:2' --benchmark_format=json --benchmark_out=/tmp/ab.json > /dev/null 2>&1
  python3 -c "
import json; d=json.load(open('/tmp/ab.json')); b=d['benchmarks'][0]
print('$b r$r engine %.2f GB/s  %.1f cycles/key @3.64GHz' % (b['engine_GBps'], 3.64e9/(b['engine_GBps']*1e9/512)))"
done; done
