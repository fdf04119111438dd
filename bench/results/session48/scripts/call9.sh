#!/bin/bash
# Session 48, call 9 (the working tree in .device/commit; one H200): call 8's prefill-heavy runs wrote
# nothing in 25 s (stop 47's call 4 ran them in ~1 s at af221b1), with the policy off too and with
# ad71609's binary. Here: the same run without --json (its progress lines), the CUDA backend with 1
# layer, and the host backend; if it is still alive after 20 s, what each thread is doing (gdb or
# eu-stack if present, else /proc's wchan and syscall).
CALL=${CALL:-call9}; source bench/results/session48/scripts/common.sh
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 4 --context 4096 --chunk 512 --window-blocks 32 --decode-steps 8"
HGCA_CONFIG= timeout 20 $D/bin/hgca-decode ${W/--layers 8/--layers 1} --overflow off > $R/one-layer.out 2>&1; echo "1 layer rc=$?" | tee $R/summary.txt
HGCA_CONFIG= timeout 20 $D/bin/hgca-decode $W --backend host > $R/host.out 2>&1; echo "host rc=$?" | tee -a $R/summary.txt
HGCA_CONFIG= $D/bin/hgca-decode $W --overflow off > $R/cuda.out 2>&1 &
pid=$!; sleep 20
if kill -0 $pid 2>/dev/null; then
  echo "cuda 8 layers: alive after 20 s" | tee -a $R/summary.txt
  which gdb eu-stack > $R/tools.txt 2>&1
  if command -v gdb > /dev/null; then timeout 60 gdb -batch -p $pid -ex "thread apply all bt 12" > $R/stacks.txt 2>&1
  elif command -v eu-stack > /dev/null; then timeout 60 eu-stack -p $pid > $R/stacks.txt 2>&1; fi
  for t in /proc/$pid/task/*; do echo "$(basename $t) $(cat $t/comm) wchan=$(cat $t/wchan) state=$(awk '{print $3}' $t/stat) utime=$(awk '{print $14}' $t/stat) syscall=$(cat $t/syscall 2>/dev/null | cut -d' ' -f1)"; done > $R/threads.txt
  kill -9 $pid
else
  wait $pid; echo "cuda 8 layers: finished rc=$?" | tee -a $R/summary.txt
fi
tail -5 $R/one-layer.out $R/host.out $R/cuda.out
sort -k4 $R/threads.txt 2>/dev/null | awk '{print $2, $3, $4}' | sort | uniq -c | sort -rn | head -20
head -80 $R/stacks.txt 2>/dev/null
cd $OUT && tar czf $CALL.tgz $CALL && rm -rf $CALL
