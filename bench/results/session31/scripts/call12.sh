#!/bin/bash
# Session 31, call 12: the final code (7eb174f and later docs): the GPU suite and the GPU model tests.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call12; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null || true
timeout 250 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
for f in gpu_tests model_tests; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$f.log | tr '\n' ' ')"; done
cat $R/machine.txt
cd $OUT && tar czf call12.tgz call12 && rm -rf call12
