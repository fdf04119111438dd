#!/bin/bash
# Session 9, call 5: where the store scatter's time goes on the GPU machine (perf, if present):
# BM_Scatter/store_allocated_ahead and flash_store at 16 KB; the GPU and model tests at HEAD.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
mkdir -p /work/main && ln -sfn $PWD/$D/shared /work/shared
B=$D/bin; R=$OUT; mkdir -p $R
which perf; perf --version 2>&1 | head -1; cat /proc/sys/kernel/perf_event_paranoid
lscpu | grep -E "Model name|^CPU\(s\)|L2|L3" 
if command -v perf >/dev/null; then
  perf record -e cpu-clock -F 2000 -g -o $R/scatter.data $B/hgca_bench_store --benchmark_filter='BM_Scatter/store_allocated_ahead/block_KB:16/threads:16/' --benchmark_min_time=3 2>&1 | grep -E "real_time|error" 
  perf report -i $R/scatter.data --no-children --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -40 | cut -c1-220 > $R/scatter_report.txt
  perf report -i $R/scatter.data --children --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -60 | cut -c1-220 > $R/scatter_report_children.txt
  perf record -e cpu-clock -F 2000 -g -o $R/d2h.data $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/' 2>&1 | grep -E "manual_time|error"
  perf report -i $R/d2h.data --no-children --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -40 | cut -c1-220 > $R/d2h_report.txt
  rm -f $R/*.data
  head -25 $R/scatter_report.txt; echo ----; head -25 $R/d2h_report.txt
fi
timeout 360 $B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
timeout 100 $B/hgca_gpu_model_tests > $R/gpu_model_tests.log 2>&1; echo "gpu_model_tests rc=$?"
tail -2 $R/gpu_tests.log; tail -1 $R/gpu_model_tests.log
