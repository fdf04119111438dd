#!/bin/bash
# Session 30, call 4: the final state (code of a63ed86) on the GPU machine: the whole GPU suite, the
# CPU suite on the Xeon and the GPU model tests.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
timeout 300 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 90 $D/bin/hgca_tests > $R/hgca_tests.log 2>&1; echo "hgca_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
grep -hE "^\[  (PASSED|FAILED|SKIPPED) " $R/*.log
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
