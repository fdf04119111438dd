#!/bin/bash
# Session 18, call 0: G 16 (Hq 32, Hkv 2) decode, which the decode kernels (G <= 8) leave to the generic
# path, against SDPA. hgca_bench_gpu_g16 is main 9134fb1's bench with exp-g16.patch (the G 16 shapes).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
timeout 120 $D/bin/hgca_bench_gpu_g16 --benchmark_filter='WindowDecode/batch:[0-9]+/hkv:2/' 2>/dev/null | grep hkv:2 | awk '{print $1, $2}'
python3 -c "
import sys; sys.path.insert(0,'bench/peers'); import torch_sdpa_window as t
for b in (1,16,64):
  for w in (1024,4096,16384):
    r = t.bench(b,2,w); print('sdpa', b, 2, w, round(r['us'],1), r['backend'])"
