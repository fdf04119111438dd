#!/bin/bash
# Context caches' growth copies streamed past the LLC (nt) against main (base); GPU suites on nt.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call15; mkdir -p $R
mkdir -p /work/main 2>/dev/null; ln -sfn $PWD/$D/shared /work/shared
$B/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu tests rc $?: $(grep -E '^\[  PASSED|^\[  FAILED' $R/gpu_tests.log | tr '\n' ' ')"
$B/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "model tests rc $?: $(grep -E '^\[  PASSED|^\[  FAILED' $R/model_tests.log | tr '\n' ' ')"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
for r in 1 2 3 4 5; do for v in base nt; do
  HGCA_TIMELINE=$R/${v}_r$r $B/bt_$v --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/${v}_r$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
python3 - $R <<'PY'
import json, sys, statistics as st
R=sys.argv[1]
for v in ("base","nt"):
  for k,m in (("flash_store_steady",2),("flash_store",0)):
    cells=[]
    for r in (1,2,3,4,5):
      b=[b for b in json.load(open(f"{R}/{v}_r{r}.json"))["benchmarks"] if b["name"].split("/")[1]==k][0]
      d=sorted(float(l.split()[6])-float(l.split()[5]) for l in open(f"{R}/{v}_r{r}_{m}.tsv"))
      cells.append(f'{b["GBps_median"]:.1f} ({st.mean(d):.0f}/{d[-1]:.0f})')
    print(f'{v:4s} {k[6:]:13s}: ' + ' | '.join(cells))
PY
cd $OUT && tar czf call15.tgz call15 && rm -rf call15
