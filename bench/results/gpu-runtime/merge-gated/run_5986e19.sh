export LD_LIBRARY_PATH=$PWD/.device/lib; .device/bin/hgca_bench_layer --benchmark_filter="BM_Merge(ZeroCopy|FloorEmpty)" 2>&1 | grep median
