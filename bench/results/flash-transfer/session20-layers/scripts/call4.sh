#!/bin/bash
# Session 20, call 4 (call 3 again, 15 repetitions, no call graphs): where the store path's scatter spends its time (perf, cpu-clock), main (base) and pf4.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; B=$D/bin; R=$OUT/call4; mkdir -p $R
P="env LD_LIBRARY_PATH=$PWD/$D/perf/lib:$LD_LIBRARY_PATH $D/perf/perf"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(12)]; print('touched 96 GiB in %.1f s' % (time.time()-t0))"
S="BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4/"
for v in base pf4; do
  $P record -e cpu-clock -F 4000 -o $R/$v.data $B/bt_$v --benchmark_filter="$S" --benchmark_repetitions=15 > $R/$v.txt 2>&1 || echo "$v failed"
  $P report -i $R/$v.data --no-children --sort sym --stdio 2>/dev/null | grep -v "^$" | head -90 > $R/${v}_flat.txt
  $P report -i $R/$v.data --children --sort sym --stdio -g none 2>/dev/null | grep -v "^$" | head -70 > $R/${v}_children.txt
  $P report -i $R/$v.data --no-children --sort comm,dso --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -20 > $R/${v}_dso.txt
  rm -f $R/$v.data
done
grep -h "GBps_median" $R/base.txt $R/pf4.txt | grep -E "_median |_mean " ; grep -E "^ +[0-9]" $R/base_flat.txt | head -40
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
