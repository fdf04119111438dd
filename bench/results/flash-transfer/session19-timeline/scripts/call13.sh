#!/bin/bash
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call13; mkdir -p $R
mkdir -p /work/main 2>/dev/null; ln -sfn $PWD/$D/shared /work/shared
$B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu tests rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' $R/gpu_tests.log | tr '\n' ' ')"
$B/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "model tests rc $?: $(grep -E '^\[  PASSED|^\[  FAILED' $R/model_tests.log | tr '\n' ' ')"
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3 4; do for v in base new; do
  HGCA_TIMELINE=$R/${v}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
python3 - $R <<'PY'
import json, sys, statistics as st
R=sys.argv[1]
for v in ("base","new"):
  for r in (1,2,3,4):
    bs={b["name"].split("/")[1]: b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"]}
    cells=[]
    for k,m in (("flash_store_steady",2),("flash_store",0)):
      b=bs[k]; d=sorted(float(l.split()[6])-float(l.split()[5]) for l in open(f"{R}/{v}_r{r}_{m}.tsv"))
      cells.append(f'{k[6:]} {b["GBps_median"]:.1f} ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f}) steps mean {st.mean(d):.0f} max {d[-1]:.0f}')
    print(f'{v:4s} r{r}: ' + ' | '.join(cells))
PY
cd $OUT && tar czf call13.tgz call13 && rm -rf call13
