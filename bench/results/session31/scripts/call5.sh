#!/bin/bash
# Session 31, call 5: the store scatter alone (CPU, instrumented), fresh against steady stores, at
# 1 and 8 layers' worth of stores (steps round-robin over the layers' 32 sequences), bulk rows
# streamed and auto.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call5; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for l in 1 8; do for w in streamed auto; do
  echo "== layers $l, $w"; timeout 100 $D/bin/fresh_steady_instr 16 64 3 $w $l | tee $R/instr_l${l}_$w.txt | grep -v "step us"
done; done
cat $R/machine.txt
