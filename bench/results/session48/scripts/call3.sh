#!/bin/bash
# Session 48, call 3 (the commit in .device/commit; one H200): issue 4's decode rows at 16 threads with the
# engine's median GB/s (engine_GBps_median, the statistic of the PyTorch peer, new in stop 47) beside
# the summed one, the PyTorch peer before and after (bench/peers/torch_cpu_sdpa.py); then why
# HgcaDecode.InterruptEndsTheProgressLine fails here (call 2) and not on the dev machine: the kernel,
# and a child on a pty that writes "x\n" and exits at once, read back until EIO, 20 times.
CALL=${CALL:-call3}; source bench/results/session48/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 120 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:4/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
timeout 120 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
python3 - $R <<'PY' | tee $R/table.txt
import json, sys
d = sys.argv[1]
for f in ("torch-1.json", "torch-2.json"):
    try: j = json.load(open(f"{d}/{f}"))
    except Exception as e: print(f, "unreadable", e); continue
    for dt, x in j["results"].items(): print(f"peer {f[:-5]} {dt}: {x['GBps_median']:.1f} GB/s median ({x['backend']})")
for b in json.load(open(d + "/engine-r1.json"))["benchmarks"]:
    print(f"{b['name'].split('/min_time')[0]:40s} engine summed {b['engine_GBps']:6.1f} median {b.get('engine_GBps_median', float('nan')):6.1f} dram read {b.get('dram_read_GBps', float('nan')):6.1f}")
PY
{ uname -a; cat /proc/version; python3 - <<'PY'
import os, pty
lost = 0
for i in range(20):
    pid, fd = pty.fork()
    if pid == 0:
        os.write(1, b"x\n"); os._exit(0)
    seen = b""
    while True:
        try: b = os.read(fd, 4096)
        except OSError: break
        if not b: break
        seen += b
    os.waitpid(pid, 0); os.close(fd)
    lost += not seen.endswith(b"\n")
print(f"pty: {lost} of 20 reads lost the child's last bytes")
PY
} > $R/pty.txt 2>&1; cat $R/pty.txt
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
