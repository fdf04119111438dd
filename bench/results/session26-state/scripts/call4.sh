#!/bin/bash
# Session 26, call 4: whether FlashD2H into fresh stores takes chunks of store memory from the OS
# during its timed runs (the benchmark's new sync_growths, background_growths and released_chunks
# counters, per run), against steady stores, at 1, 8 and 16 layers; 3 rounds. The build of
# 345edc0 plus those counters. Guest memory touched first.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S='BM_D2H/flash_store(_steady)?/block_KB:16/slots:(4|16|32)/threads:0/selected_pct:10/layers:(1|8|16)/laps:4/|BM_D2H/memcpy_batch/block_KB:16/'
for r in 1 2 3; do
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/r$r.json > /dev/null 2>&1 || echo "round $r failed"
done
python3 - $R <<'PY'
import glob, json, sys
print(f"{'benchmark':62s} {'round':>5s} {'GB/s':>6s} {'sync':>6s} {'bg':>6s} {'released':>8s} {'copy':>6s}")
for i, p in enumerate(sorted(glob.glob(sys.argv[1] + "/r*.json")), 1):
    for b in json.load(open(p))["benchmarks"]:
        n = b["name"].split("/threads")[0] + "/" + next(x for x in b["name"].split("/") if x.startswith("layers")) if "layers" in b["name"] else b["name"].split("/slots")[0]
        print(f"{n:62s} {i:5d} {b['GBps_median']:6.1f} {b.get('sync_growths', 0):6.1f} {b.get('background_growths', 0):6.1f} {b.get('released_chunks', 0):8.1f} {b.get('copy_GBps', 0):6.1f}")
PY
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
