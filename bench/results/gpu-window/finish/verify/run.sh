#!/bin/bash
# Verification of the committed kernel change (relaxed second cluster arrive).
D=.device-v; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT
timeout 330 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|tests ran" $R/gpu_tests.log | head
timeout 90 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "model tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|tests ran" $R/gpu_model_tests.log | head
timeout 150 compute-sanitizer --tool racecheck $B/hgca_gpu_tests --gtest_filter='WindowAttention.LongWindowDecodeManySlices:WindowAttention.BatchLargerThanOneLaunchDecode:All/WindowAttentionSweep.DecodeRaggedWrapped/bf16_G4_D128:All/WindowAttentionSweep.DecodeRaggedWrapped/f16_G8_D256' > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -n 3 $R/racecheck.log
