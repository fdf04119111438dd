#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT/thp; mkdir -p $R
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
for r in 1 2; do
  grep -E "thp_fault_alloc |thp_fault_fallback " /proc/vmstat | tr '\n' ' '; echo
  HGCA_TIMELINE=$R/on_r$r $B/bt_ph --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/on_r$r.json > /dev/null 2>&1
  grep -E "thp_fault_alloc |thp_fault_fallback " /proc/vmstat | tr '\n' ' '; echo
  HGCA_TIMELINE=$R/off_r$r python3 -c "
import ctypes, os, sys
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])" $B/bt_ph --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/off_r$r.json > /dev/null 2>&1
done
grep -E "thp_fault_alloc |thp_fault_fallback " /proc/vmstat | tr '\n' ' '; echo
cd $OUT && tar czf thp.tgz thp && rm -rf thp
