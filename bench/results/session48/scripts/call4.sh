#!/bin/bash
# Session 48, call 4 (the commit in .device/commit; one H200): HgcaDecode.InterruptEndsTheProgressLine
# failed here in call 2 (the "\n" its SIGINT handler writes never reached the test's pty) and passes on the
# dev machine. Here: that test 5 times; SIGINT's disposition this shell hands its children; and a
# child on a pty that draws a line, installs a SIGINT handler writing "\n" then dying of the signal
# (as hgca-decode's), killed with SIGINT, read until EIO: 20 times, with 1 and with 16 threads spinning.
CALL=${CALL:-call4}; source bench/results/session48/scripts/common.sh
exe=$(strings $D/bin/hgca_decode_tests | grep -m1 '/tools/hgca-decode/hgca-decode$')
mkdir -p $(dirname $exe) && ln -sf $PWD/$D/bin/hgca-decode $exe
grep -E '^Sig(Ign|Blk|Cgt)' /proc/self/status > $R/signals.txt
timeout 120 $D/bin/hgca_decode_tests --gtest_filter='*InterruptEnds*' --gtest_repeat=5 > $R/interrupt.log 2>&1
echo "interrupt test x5 rc=$? $(grep -c '^\[       OK' $R/interrupt.log) ok $(grep -c '^\[  FAILED  \] HgcaDecode' $R/interrupt.log) failed" | tee $R/summary.txt
cat $R/signals.txt
timeout 60 python3 - <<'PY' 2>&1 | tee -a $R/summary.txt
import os, pty, signal, threading, time
def trial(threads):
    pid, fd = pty.fork()
    if pid == 0:
        for _ in range(threads - 1): threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
        def h(sig, frame):
            os.write(2, b"\n"); signal.signal(sig, signal.SIG_DFL); os.kill(os.getpid(), sig)
        signal.signal(signal.SIGINT, h)
        os.write(2, b"\rbar [>   ] 1/9")
        while True: time.sleep(0.01)
    seen, sent = b"", False
    while True:
        try: b = os.read(fd, 4096)
        except OSError: break
        if not b: break
        seen += b
        if not sent and b"] " in seen: os.kill(pid, signal.SIGINT); sent = True
    _, st = os.waitpid(pid, 0); os.close(fd)
    return seen.endswith(b"\n"), os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGINT
for t in (1, 16):
    r = [trial(t) for _ in range(20)]
    print(f"pty, {t} thread(s): newline arrived {sum(a for a, _ in r)} of 20, died of SIGINT {sum(b for _, b in r)} of 20")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
