#!/bin/bash
# Session 48, call 10 (the working tree in .device/commit; one H200): call 9 found the prefill-heavy run
# slow, not hung (2560 of 4104 positions in 14.8 s; 1 layer: 0.18 s), its main thread alone on a core
# (19.5 s of CPU) while every worker sleeps. Here: stackspy.so (scripts/stackspy.c) preloaded, the
# main thread's stack sampled 8 times, 10–17 s in, with the process's maps, to resolve on the dev
# machine (addr2line on the same build, unstripped).
CALL=${CALL:-call10}; source bench/results/session48/scripts/common.sh
W="--layers 8 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 4 --context 4096 --chunk 512 --window-blocks 32 --decode-steps 8"
HGCA_CONFIG= LD_PRELOAD=$PWD/$D/diag/stackspy.so $D/bin/hgca-decode $W --overflow off > $R/cuda.out 2> $R/cuda.err &
pid=$!; sleep 10
grep -E 'hgca-decode|libc' /proc/$pid/maps > $R/maps.txt
python3 -c "import ctypes, signal, sys, time
libc = ctypes.CDLL(None)
pid = int(sys.argv[1])
for i in range(8):
    libc.syscall(234, pid, pid, int(signal.SIGUSR2)); time.sleep(1)" $pid  # tgkill: the main thread
for t in /proc/$pid/task/*; do echo "$(basename $t) $(cat $t/comm) state=$(awk '{print $3}' $t/stat) utime=$(awk '{print $14}' $t/stat)"; done > $R/threads.txt
kill -9 $pid
grep -c '^STACK' $R/cuda.err; head -3 $R/maps.txt
cd $OUT && tar czf $CALL.tgz $CALL && rm -rf $CALL
