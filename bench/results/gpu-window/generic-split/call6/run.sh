#!/bin/bash
# Session 18, generic-split call 6: call 5's change plus the combine kernel as a block per (row,
# query head) whose warps take the slices in turn. hgca_bench_gpu: at most 64 slices;
# hgca_bench_gpu_s128: the same with kGenMaxSplits 128; hgca_bench_gpu_base: main cc0b4ef (no split).
# The GPU tests as in call 5 (64 slices), then the G 16 shapes alternated with SDPA, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$(mktemp -d)
. bench/results/gpu-window/generic-split/tests.sh
. bench/results/gpu-window/generic-split/g16.sh base:hgca_bench_gpu_base hgca:hgca_bench_gpu s128:hgca_bench_gpu_s128
