#!/bin/bash
# Session 26, call 9: the kept engine form (736a13d: a task's runs in one pass) on the GPU machine:
# BM_DecodeVaried contiguous against segmented, 3 rounds as in call 8; before it, the final code's
# GPU suites (all of hgca_gpu_tests, the model tests), the engine tests on every ISA path, a
# memcheck of the sparse-attention kernel's tests and the decode driver's default run.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call9; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared  # the model tests' data, where the build expects ../shared
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
timeout 240 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -4 $R/gpu_tests.txt
timeout 120 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model_tests.txt 2>&1; echo "model tests rc=$?"; tail -3 $R/gpu_model_tests.txt
timeout 60 $D/bin/hgca_tests --gtest_filter='*SparseEngine*' > $R/engine_tests.txt 2>&1; echo "engine tests rc=$?"; grep -E "PASSED|FAILED|skipp" $R/engine_tests.txt | head -5
timeout 150 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_filter='SparseAttention*' > $R/memcheck.txt 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED" $R/memcheck.txt
timeout 60 $D/bin/hgca-decode --json > $R/decode.json 2> $R/decode.err; echo "decode rc=$?"
for r in 1 2 3; do
  timeout 100 $D/bin/hgca_bench_cpu --benchmark_filter='BM_DecodeVaried' --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 -c "import json; d=json.load(open('$R/decode.json')); print('decode tbt p50 %.3f ms p99 %.3f ms transfer share %.3f' % (d['tbt_ms_p50'], d['tbt_ms_p99'], d['transfer_share']))"
python3 bench/results/cpu-engine/session25-segments/summary.py $R/r*.json | tee $R/summary.txt
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
