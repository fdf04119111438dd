set -u
export LD_LIBRARY_PATH=$PWD/.device-tl/lib
mkdir -p $OUT/tl
for s in "16 8 16384" "1 8 1024" "64 4 4096"; do set -- $s
  HGCA_PROBE_OUT=$OUT/tl .device-tl/bin/hgca_bench_gpu --benchmark_filter="BM_WindowDecode/batch:$1/hkv:$2/window:$3/" --benchmark_format=json --benchmark_out=$OUT/tl/bench_b$1_h$2_w$3.json > /dev/null 2>$OUT/tl/err_b$1.txt
  grep '"us"' $OUT/tl/bench_b$1_h$2_w$3.json
done
cd $OUT && tar czf tl.tgz tl && rm -rf tl
