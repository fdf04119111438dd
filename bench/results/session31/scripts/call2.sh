#!/bin/bash
# Session 31, call 2: the store scatter alone (CPU), fresh against steady stores, each leaf phase's thread time.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call2; mkdir -p $R
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
timeout 100 $D/bin/fresh_steady_instr 16 64 5 | tee $R/instr_t16.txt
