#!/bin/bash
# Session 30, call 3: call 2's "after" engine was by mistake a build without software prefetch (E);
# this call measures the real ones. hgca_bench_cpu built at 08264ff ("base"), 72b0222 (A: 16-key
# decode blocks), 93444b0 (B: A + conditional rescale), C (B, the outputs always rescaled: the V
# loop without the branch), D (B with 64-key decode blocks: the conditional rescale alone), E (B
# without the next block's prefetch), alternating, 2 rounds, 4 GB working set.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
export HGCA_BENCH_WS_MB=4096
for r in 1 2; do
  for b in base A B C D E; do
    timeout 60 $D/bin/hgca_bench_cpu-$b --benchmark_filter='BM_Decode/threads:(0|1)/isa:4/dtype:2|BM_Decode/threads:0/isa:1/dtype:1' \
      --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "$b round $r failed"
  done
  date +%T
done
python3 - $R <<'PY'
import json, sys, glob
R = sys.argv[1]
rows = {}
for b in ["base", "A", "B", "C", "D", "E"]:
    for p in sorted(glob.glob(f"{R}/{b}-r*.json")):
        for x in json.load(open(p))["benchmarks"]:
            rows.setdefault(x["name"].split("/min_time")[0], {}).setdefault(b, []).append(f"{x['engine_GBps']:.1f}/{x['dram_read_GBps']:.0f}")
for n, v in rows.items():
    print(n)
    for b, xs in v.items(): print(f"  {b:<5} {'  '.join(xs)}")
PY
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
