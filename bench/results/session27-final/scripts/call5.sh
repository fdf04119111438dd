#!/bin/bash
# Session 27, call 5: the context caches' first segment at 16 KiB by default (was 128 KiB): the
# whole GPU suite and the model tests on it; the CPU engine over contiguous and segmented sets and
# the GPU kernel over segmented host memory at 128 and 16 KiB (HGCA_BENCH_FIRST_SEGMENT_KB, ABBA);
# FlashD2H at 16 layers at both; hgca-decode's default run before (pre: 128 KiB) and after.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared
cat /proc/loadavg
timeout 280 $D/bin/hgca_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"; tail -3 $R/gpu_tests.log
timeout 60 $D/bin/hgca_gpu_model_tests --gtest_brief=1 > $R/gpu_model.log 2>&1; echo "gpu_model rc=$?"; tail -1 $R/gpu_model.log
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="128 16"; else order="16 128"; fi
  for kb in $order; do
    HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 100 $D/bin/hgca_bench_cpu --benchmark_filter='BM_DecodeVaried' \
      --benchmark_format=json --benchmark_out=$R/cpu-$kb-r$r.json > /dev/null 2>&1 || echo "cpu $kb round $r failed"
  done
done
for r in 1 2; do for kb in 128 16; do
  HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 60 $D/bin/hgca_bench_gpu_sparse --benchmark_filter='BM_SparseDecodeHost' \
    --benchmark_format=json --benchmark_out=$R/gpu-$kb-r$r.json > /dev/null 2>&1 || echo "gpu $kb round $r failed"
done; done
for i in 1 2 3; do for b in pre bin; do
  timeout 30 $D/$b/hgca-decode --json > $R/decode-$b-$i.json 2>/dev/null || echo "decode $b $i failed"
done; done
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store(_steady_varied)?/block_KB:16/slots:32/threads:0/selected_pct:10/layers:16/laps:4/'
for r in 1 2; do
  if [ $r = 1 ]; then order="128 16"; else order="16 128"; fi
  for kb in $order; do
    HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter="$S" \
      --benchmark_format=json --benchmark_out=$R/d2h-$kb-r$r.json > /dev/null 2>&1 || echo "d2h $kb round $r failed"
  done
done
cat /proc/loadavg
python3 bench/results/session27-final/summary.py $R | tee $R/summary.txt
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
