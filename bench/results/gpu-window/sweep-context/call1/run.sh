#!/bin/bash
# Session 18, call 1: what slows the goal shape after a heavy shape (issue 3). hgca_bench_gpu_exp is
# main 988d225's hgca_bench_gpu with exp-keep-sleep.patch: HGCA_EXP_KEEP=1 keeps (leaks) the
# previous shape's device memory instead of freeing it, HGCA_EXP_SLEEP_MS sleeps after freeing it.
# Without either it is main. SDPA is bench/peers/torch_sdpa_window.py's bench(). 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin/hgca_bench_gpu_exp; R=$OUT; mkdir -p $R
G='batch:16/hkv:8/window:16384/'; H='batch:64/hkv:32/window:16384/'
nvidia-smi --query-gpu=timestamp,temperature.gpu,temperature.memory,clocks.sm,clocks.mem,power.draw \
  --format=csv,noheader -lms 250 > $R/smi.csv & SMI=$!
ours() { timeout 90 $B --benchmark_filter="WindowDecode/($1)" 2>/dev/null | grep "$G" | awk -v l="$2" '{print l, $2}'; }
sdpa() { python3 -c "
import sys; sys.path.insert(0,'bench/peers'); import torch_sdpa_window as t
for s in [$1]: r = t.bench(*s)
print('$2', round(r['us'], 1))"; }
for r in 1 2 3; do
  echo "# round $r $(date +%T)" >&2
  ours "$G" alone
  ours "$H|$G" after_heavy_freed
  HGCA_EXP_KEEP=1 ours "$H|$G" after_heavy_kept
  HGCA_EXP_SLEEP_MS=10000 ours "$H|$G" after_heavy_freed_sleep10s
  timeout 90 $B --benchmark_filter="WindowDecode/$H" >/dev/null 2>&1; ours "$G" next_process_after_heavy
  HGCA_EXP_KEEP=1 ours "batch:(1|16|64)/" in_sweep_kept
  ours "batch:(1|16|64)/" in_sweep_freed
  sdpa "(16,8,16384)" sdpa_alone
  sdpa "(64,32,16384),(16,8,16384)" sdpa_after_heavy
done | tee $R/summary.txt
kill $SMI
python3 - $R/summary.txt <<'PY'
import sys, collections, statistics
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    k, v = l.split(); d[k].append(float(v))
print(f"{'case':28} {'median us':>9}  rounds")
for k, v in d.items(): print(f"{k:28} {statistics.median(v):9.1f}  {' '.join(f'{x:.1f}' for x in v)}")
PY
