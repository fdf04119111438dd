#!/bin/bash
# Session 29, call 5: the CPU engine's decode kernels after the block_scores refactor (2d0a9f9 on):
# hgca_bench_cpu built at bcb66ba (before) and at this commit (after), alternating, 2 rounds each,
# BM_Decode on all 16 threads and BM_DecodeVaried, 4 GB working set (as session 26's call 2), and
# PyTorch's CPU SDPA peer once; then hgca-decode's 32-layer run with --overflow auto and off, 2 each.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt; nproc >> $R/machine.txt
export HGCA_BENCH_WS_MB=4096
for r in 1 2; do
  for b in before after; do
    bin=$D/bin/hgca_bench_cpu; [ $b = before ] && bin=$D/bin/hgca_bench_cpu-before
    timeout 150 $bin --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried' \
      --benchmark_format=json --benchmark_out=$R/$b-r$r.json > /dev/null 2>&1 || echo "engine $b round $r failed"
    date +%T
  done
done
timeout 60 python3 bench/peers/torch_cpu_sdpa.py > $R/torch.json 2> $R/torch.err || echo "peer failed"
unset HGCA_BENCH_WS_MB
for i in 1 2; do
  for o in auto off; do
    timeout 60 $D/bin/hgca-decode --json --overflow $o --layers 32 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 1 \
      --context 4096 --chunk 512 > $R/decode32-$o-$i.json 2>$R/decode32-$o-$i.err || echo "32L $o $i rc=$?"
  done
done
python3 - $R <<'PY'
import json, sys, glob, statistics as st
R = sys.argv[1]
rows = {}
for p in sorted(glob.glob(f"{R}/*-r*.json")):
    b = p.split('/')[-1].split('-r')[0]
    for x in json.load(open(p))["benchmarks"]:
        rows.setdefault(x["name"].split("/min_time")[0], {}).setdefault(b, []).append((x["engine_GBps"], x["dram_read_GBps"]))
print(f"{'benchmark':<44} {'before GB/s':>14} {'after GB/s':>14} {'read':>12}")
for n, v in rows.items():
    f = lambda b: " ".join(f"{e:.1f}" for e, _ in v.get(b, []))
    print(f"{n:<44} {f('before'):>14} {f('after'):>14} {' '.join(f'{r:.0f}' for _, r in v.get('after', [])):>12}")
print(open(f"{R}/torch.json").read()[:600])
for p in sorted(glob.glob(f"{R}/decode32*.json")):
    try: r = json.load(open(p))
    except Exception: print(p.split('/')[-1], 'no result'); continue
    print(f"{p.split('/')[-1]:<24} prefill {r['prefill_s']:6.2f} s  p50 {r['tbt_ms_p50']:6.3f}  enq {st.median(r['enqueue_ms'][1:]):6.3f}  tok/s {r['tokens_per_s']:6.0f}")
PY
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
