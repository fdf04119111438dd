#!/bin/bash
# Session 18: the cluster decode kernel under ncu at G 8 (batch 16, Hkv 4, W 16384; 0.94x SDPA)
# against G 4 with the same (sequence, KV head) pairs and bytes (batch 8, Hkv 8, W 16384), one
# launch each after warm-up. hgca_bench_gpu is main e963d5c's.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib
for s in batch:16/hkv:4/window:16384/ batch:8/hkv:8/window:16384/; do
  echo "## $s"
  timeout 200 ncu --kernel-name regex:decode_cluster --launch-skip 8 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section SchedulerStats --section SourceCounters \
    $D/bin/hgca_bench_gpu --benchmark_filter="WindowDecode/$s" 2>&1 | grep -v "^==PROF==" |
    grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Stall|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Registers Per|Grid Size|Cluster Size|Shared Memory Per Block|Bank Conflicts|Eligible Warps|Issued Warp|No Eligible|Active Warps Per|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Branch Instructions|Executed Ipc|Uncoalesced|estimated speedup" | head -60
done | tee $OUT/ncu.txt
