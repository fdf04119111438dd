#!/bin/bash
# Session 31, call 9: the final code (cf73a99): the GPU suite, the host suite on the Xeon, the GPU model and allocation-failure tests.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call9; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null || true
timeout 250 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 150 $D/bin/hgca_tests > $R/tests.log 2>&1; echo "hgca_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
timeout 100 $D/bin/hgca_gpu_alloc_tests > $R/alloc_tests.log 2>&1; echo "hgca_gpu_alloc_tests rc=$?"
for f in gpu_tests tests model_tests alloc_tests; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$f.log | tr '\n' ' ')"; done
cat $R/machine.txt
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
