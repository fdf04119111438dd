set -u
D=.device-merge
export LD_LIBRARY_PATH=$PWD/$D/lib
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
for p in 1 2; do
  $D/bin/hgca_bench_layer --benchmark_filter='Merge' --benchmark_format=json --benchmark_out=$OUT/merge_floor_pass$p.json >/dev/null 2>$OUT/stderr_pass$p.txt || echo "pass $p rc $?"
done
python3 $D/table.py $OUT/merge_floor_pass1.json $OUT/merge_floor_pass2.json | tee $OUT/table.txt
