#!/bin/bash
# Session 31, call 11: the CPU engine with full chunks known at compile time (7eb174f, "after")
# against 0fe7f6c ("before"): hgca_bench_cpu of both builds alternating, 2 rounds, BM_Decode on all
# 16 threads (every ISA path) and BM_DecodeVaried with a 4 GB working set; PyTorch's CPU SDPA peer
# once; the CPU suite on the Xeon (its ISA paths).
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call11; mkdir -p $R
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
lscpu | grep -E 'Model name|Flags' | cut -c1-2000 >> $R/machine.txt
timeout 90 $D/bin/hgca_tests > $R/hgca_tests.log 2>&1; echo "hgca_tests rc=$?"
export HGCA_BENCH_WS_MB=4096
for r in 1 2; do
  for b in before after; do
    bin=$D/bin/hgca_bench_cpu; [ $b = before ] && bin=$D/bin/hgca_bench_cpu-before
    timeout 100 $bin --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried' \
      --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "engine $b round $r failed"
    date +%T
  done
done
timeout 60 python3 bench/peers/torch_cpu_sdpa.py > $R/torch.json 2> $R/torch.err || echo "peer failed"
grep -E "PASSED|FAILED|SKIPPED" $R/hgca_tests.log | head
python3 - $R <<'PY'
import json, sys, glob
R = sys.argv[1]
rows = {}
for p in sorted(glob.glob(f"{R}/*-r*.json")):
    b = p.split('/')[-1].split('-r')[0]
    for x in json.load(open(p))["benchmarks"]:
        rows.setdefault(x["name"].split("/min_time")[0], {}).setdefault(b, []).append((x["engine_GBps"], x["dram_read_GBps"], x.get("busy_max_over_mean", 0)))
print(f"{'benchmark':<44} {'before GB/s':>12} {'after GB/s':>12} {'read':>10} {'balance':>10}")
for n, v in rows.items():
    f = lambda b: " ".join(f"{e:.1f}" for e, _, _ in v.get(b, []))
    print(f"{n:<44} {f('before'):>12} {f('after'):>12} {' '.join(f'{r:.0f}' for _, r, _ in v.get('after', [])):>10} {' '.join(f'{m:.3f}' for _, _, m in v.get('after', [])):>10}")
print(open(f"{R}/torch.json").read()[:600])
PY
cd $OUT && tar czf call11.tgz call11 && rm -rf call11
