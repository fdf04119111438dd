#!/bin/bash
# Session 31, call 6: as call 5, with the allocator timed (calls, time inside, lock wait), fresh against steady stores, at
# 1 and 8 layers' worth of stores (steps round-robin over the layers' 32 sequences), bulk rows
# streamed and auto.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call6; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for l in 8; do for w in streamed; do
  echo "== layers $l, $w"; timeout 100 $D/bin/fresh_steady_instr 16 64 3 $w $l | tee $R/instr_l${l}_$w.txt | grep -v "step us"
done; done
cat $R/machine.txt
