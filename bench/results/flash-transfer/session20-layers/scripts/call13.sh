#!/bin/bash
# Session 20, call 13 (diagnosis): FlashD2H into stores (main 21f2b33) under three mallocs: glibc as
# it comes; glibc that keeps what it frees (trim and mmap thresholds 1 GiB); oneTBB's scalable
# allocator for every malloc (libtbbmalloc_proxy). Interleaved, 3 rounds of 2 repetitions.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call13; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|8|16)/threads:0/selected_pct:10/layers:(1|4|8)/laps:4/|BM_D2H/flash_pool/block_KB:16/slots:4/"
for r in 1 2 3; do for v in glibc keep tbb; do
  case $v in
    glibc) E="";;
    keep) E="GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=1073741824";;
    tbb) E="LD_PRELOAD=$PWD/$D/lib/libtbbmalloc_proxy.so.2";;
  esac
  env $E $B/hgca_bench_transfer --benchmark_filter="$S" --benchmark_repetitions=2 --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
for v in glibc keep tbb; do echo "== $v"; python3 bench/results/flash-transfer/session20-layers/summary.py $R/${v}_r*.json | grep -v memcpy | tee $R/summary_$v.txt; done
cd $OUT && tar czf call13.tgz call13 && rm -rf call13
