#!/bin/bash
# Session 48, call 5 (the commit in .device/commit; one H200): who sets SIGINT's handler in hgca-decode on
# this machine (call 4: the interrupt test fails 5 of 5 here, a python child doing the same passes 20
# of 20). sigspy.so (scripts/sigspy.c, built on the dev machine, carried in .device/diag) logs every
# sigaction/signal call for SIGINT with a backtrace; hgca-decode --backend host on a pty, SIGINT once
# the bar shows; what the pty received, in repr.
CALL=${CALL:-call5}; source bench/results/session48/scripts/common.sh
timeout 60 python3 - $D > $R/spy.txt 2>&1 <<'PY'
import os, pty, signal, sys
d = sys.argv[1]
env = dict(os.environ, LD_PRELOAD=os.path.abspath(d + "/diag/sigspy.so"))
pid, fd = pty.fork()
if pid == 0:
    exe = d + "/bin/hgca-decode"
    os.execve(exe, [exe, "--backend", "host", "--context", "1000000", "--chunk", "64", "--decode-steps", "0"], env)
seen, sent = b"", False
while True:
    try: b = os.read(fd, 4096)
    except OSError: break
    if not b: break
    seen += b
    if not sent and b"] " in seen: os.kill(pid, signal.SIGINT); sent = True
_, st = os.waitpid(pid, 0)
print(seen.decode(errors="replace"))
print("repr of the end:", repr(seen[-200:]), "status", st)
PY
cat $R/spy.txt | tail -60
cd $OUT && tar czf $CALL.tgz $CALL && rm -rf $CALL
