#!/bin/bash
# Session 18, call 3. (a) Call 2's sweeps again, every shape's memory kept, for the record (call 2's
# SDPA files did not come back): hgca_bench_gpu_new (07702bc) and bench/peers/torch_sdpa_window.py,
# alternated, 3 rounds. (b) G 8 (Hkv 4) at batch 16: hgca_bench_gpu_exp is 07702bc with
# exp-slices.patch, which forces the cluster path with HGCA_EXP_SLICES slices (and a tail launch of
# the last HGCA_EXP_TAIL_B sequences in HGCA_EXP_TAIL_SLICES slices). Everything into one tarball.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; R=$(mktemp -d); mkdir -p $R
for r in 1 2 3; do
  timeout 200 $D/bin/hgca_bench_gpu_new --benchmark_filter='WindowDecode/' --benchmark_format=json \
    --benchmark_out=$R/hgca_round$r.json >/dev/null 2>>$R/stderr.txt
  timeout 300 python3 bench/peers/torch_sdpa_window.py > $R/sdpa_round$r.json 2>>$R/stderr.txt
done
ex() { timeout 60 $D/bin/hgca_bench_gpu_exp --benchmark_filter="WindowDecode/$1" 2>/dev/null | grep "$1" | awk -v l="$2" -v s="$1" '{print s, l, $2}'; }
for r in 1 2; do
  for W in 4096 16384; do
    S="batch:16/hkv:4/window:$W/"
    ex $S planner
    for n in 2 3 4 5 6 7 8 10 12 14 16; do HGCA_EXP_SLICES=$n ex $S "n=$n"; done
    for n in 6 7 8; do for t in 1 2 3; do
      HGCA_EXP_SLICES=$n HGCA_EXP_TAIL_B=$t HGCA_EXP_TAIL_SLICES=$((2*n)) ex $S "n=$n,tail=$t@$((2*n))"; done; done
  done
done > $R/g8_explore.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python3 bench/results/gpu-window/sweep-context/summary.py $R > $R/summary.txt
tar -C $R -czf $OUT/call3.tar.gz .
cat $R/summary.txt
python3 - $R/g8_explore.txt <<'PY'
import sys, collections, statistics
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    s, k, v = l.split(); d[(s, k)].append(float(v))
for (s, k), v in d.items(): print(f"{s:32} {k:18} {statistics.median(v):8.1f}  {v}")
PY
