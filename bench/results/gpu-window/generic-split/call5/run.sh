#!/bin/bash
# Session 18, generic-split call 5: the committed form (one-tile slices at the least). The whole GPU
# suite and the model tests; memcheck and racecheck of the new test; the G 16 (Hq 32, Hkv 2) decode
# shapes: hgca_bench_gpu_base (main cc0b4ef, no split, with call0-exp-g16.patch for the shapes),
# hgca_bench_gpu (this change) and SDPA, alternated, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$(mktemp -d)
. bench/results/gpu-window/generic-split/tests.sh
. bench/results/gpu-window/generic-split/g16.sh base:hgca_bench_gpu_base hgca:hgca_bench_gpu
