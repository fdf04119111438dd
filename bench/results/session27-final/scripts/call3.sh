#!/bin/bash
# Session 27, call 3: the context caches' first segment (StoreMemoryOptions::
# context_first_segment_bytes, 128 KiB; the benchmarks' HGCA_BENCH_FIRST_SEGMENT_KB) at 128, 32 and
# 16 KiB: FlashD2H into fresh and steady stores at 1 and 8 layers (3 rounds, the sizes alternating;
# guest memory touched first), and the CPU engine over contiguous and segmented sets (2 rounds);
# memcheck of CudaErrors.* without the API errors its test provokes on purpose.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no $D/bin/hgca_gpu_tests \
  --gtest_filter='CudaErrors.*' > $R/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -3
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store(_steady_varied)?/block_KB:16/slots:(4|16)/threads:0/selected_pct:10/layers:(1|8)/laps:4/'
for r in 1 2 3; do for kb in 128 32 16; do
  HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 60 $D/bin/hgca_bench_transfer --benchmark_filter="$S" \
    --benchmark_format=json --benchmark_out=$R/d2h-$kb-r$r.json > /dev/null 2>&1 || echo "d2h $kb round $r failed"
done; done
for r in 1 2; do for kb in 128 16; do
  HGCA_BENCH_FIRST_SEGMENT_KB=$kb timeout 100 $D/bin/hgca_bench_cpu --benchmark_filter='BM_DecodeVaried' \
    --benchmark_format=json --benchmark_out=$R/cpu-$kb-r$r.json > /dev/null 2>&1 || echo "cpu $kb round $r failed"
done; done
for kb in 128 16; do echo "CPU engine, first segment $kb KiB"; python3 bench/results/cpu-engine/session25-segments/summary.py $R/cpu-$kb-r*.json; done | tee $R/cpu-summary.txt
python3 - $R <<'PY' | tee $R/d2h-summary.txt
import glob, json, re, sys
rows = {}
for p in sorted(glob.glob(sys.argv[1] + "/d2h-*.json")):
    kb = int(re.search(r"d2h-(\d+)-r", p).group(1))
    for b in json.load(open(p))["benchmarks"]:
        n = b["name"]
        key = ("fresh" if "/flash_store/" in n else "steady_varied") + " L" + re.search(r"layers:(\d+)", n).group(1)
        rows.setdefault((key, kb), []).append(b["GBps_median"])
print(f"{'FlashD2H into stores':20s} {'first segment':>13s}  GB/s per round")
for (key, kb), v in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
    print(f"{key:20s} {kb:10d} KiB  " + " ".join(f"{x:5.1f}" for x in v) + f"   median {sorted(v)[len(v)//2]:5.1f}")
PY
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
