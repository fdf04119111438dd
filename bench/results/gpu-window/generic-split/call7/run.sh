#!/bin/bash
# Session 18, generic-split call 7: the committed form (this folder's README): the GPU tests as in
# call 5, then the G 16 shapes, main cc0b4ef (no split) and this commit alternated with SDPA, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$(mktemp -d)
. bench/results/gpu-window/generic-split/tests.sh
. bench/results/gpu-window/generic-split/g16.sh base:hgca_bench_gpu_base hgca:hgca_bench_gpu
