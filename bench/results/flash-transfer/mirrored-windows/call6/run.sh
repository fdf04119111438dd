#!/bin/bash
# Session 9, call 6: perf (carried from the dev machine) on the store scatter at 16 threads and on
# flash_store at 16 KB, 10 % selected, 4 slots.
D=.device
export LD_LIBRARY_PATH=$PWD/$D/lib
B=$D/bin; R=$OUT; mkdir -p $R
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$PWD/$D/lib $D/perf/perf"
$P --version
$P record --all-user -e cpu-clock -F 2000 -g -o $R/scatter.data $B/hgca_bench_store --benchmark_filter='BM_Scatter/(store_allocated_ahead|pool)/block_KB:16/threads:16/' --benchmark_min_time=3 2>&1 | grep -E "real_time|rror" 
$P report -i $R/scatter.data --no-children --stdio --sort sym 2>&1 | grep -E "^ +[0-9]" | head -45 | cut -c1-230 > $R/scatter_report.txt
$P report -i $R/scatter.data --children --stdio --sort sym 2>&1 | grep -E "^ +[0-9]" | head -70 | cut -c1-230 > $R/scatter_report_children.txt
$P record --all-user -e cpu-clock -F 2000 -g -o $R/d2h.data $B/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_(store|pool)/block_KB:16/slots:4/threads:0/selected_pct:(10|0)/' 2>&1 | grep -E "manual_time|rror"
$P report -i $R/d2h.data --no-children --stdio --sort sym 2>&1 | grep -E "^ +[0-9]" | head -45 | cut -c1-230 > $R/d2h_report.txt
$P report -i $R/d2h.data --children --stdio --sort sym 2>&1 | grep -E "^ +[0-9]" | head -70 | cut -c1-230 > $R/d2h_report_children.txt
rm -f $R/*.data
head -30 $R/scatter_report.txt | cut -c1-160; echo ----; head -30 $R/d2h_report.txt | cut -c1-160
