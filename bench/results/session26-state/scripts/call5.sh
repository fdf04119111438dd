#!/bin/bash
# Session 26, call 5: the review fixes on the GPU machine: the sparse kernel's 16-byte loads chosen
# per segment (new test SparseAttention.SegmentsUnalignedPastTheFirst) and its segment table read
# once per segment; all of hgca_gpu_tests, the model tests, a memcheck of the sparse kernel's tests
# and the decode driver's default run.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared  # the model tests' data, where the build expects ../shared
timeout 240 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -4 $R/gpu_tests.txt
timeout 120 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model_tests.txt 2>&1; echo "model tests rc=$?"; tail -2 $R/gpu_model_tests.txt
timeout 200 compute-sanitizer --tool memcheck $D/bin/hgca_gpu_tests --gtest_brief=1 --gtest_filter='SparseAttention*' > $R/memcheck.txt 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.txt
timeout 60 $D/bin/hgca-decode --json > $R/decode.json 2> $R/decode.err; echo "decode rc=$?"
python3 -c "import json; d=json.load(open('$R/decode.json')); print('decode tbt p50 %.3f ms p99 %.3f ms transfer share %.3f' % (d['tbt_ms_p50'], d['tbt_ms_p99'], d['transfer_share']))"
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
