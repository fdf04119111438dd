#!/usr/bin/env python3
"""Per benchmark (contiguous or segmented, dtype): engine GB/s, its ratio to the streaming read in the
same run, tasks and the slowest worker's busy time over the mean, each round; then segmented over
contiguous per round. Usage: summary.py r1.json [r2.json ...] (Google Benchmark JSON), or one
data/*.tgz holding them."""
import json
import re
import sys
import tarfile


def runs(paths):
    for path in paths:
        if path.endswith(".tgz"):
            with tarfile.open(path) as tar:
                for m in sorted(tar.getmembers(), key=lambda m: m.name):
                    if re.fullmatch(r"r\d+\.json", m.name.rsplit("/", 1)[-1]):  # the rounds, not decode.json
                        yield json.load(tar.extractfile(m))
        else:
            yield json.load(open(path))


rows = {}
for run in runs(sys.argv[1:]):
    for b in run["benchmarks"]:
        kind = "segmented" if "Segmented" in b["name"] else "contiguous"
        dtype = "bf16" if "dtype:2" in b["name"] else "fp16"
        rows.setdefault((dtype, kind), []).append(b)
print(f"{'dtype':5s} {'layout':10s} {'engine GB/s per round':28s} {'/ read':18s} {'tasks':>7s} {'busy max/mean':>14s}")
for (dtype, kind), bs in sorted(rows.items()):
    gbps = " ".join(f"{b['engine_GBps']:6.1f}" for b in bs)
    ratio = " ".join(f"{b['ratio_to_dram']:.2f}" for b in bs)
    busy = max(b["busy_max_over_mean"] for b in bs)
    print(f"{dtype:5s} {kind:10s} {gbps:28s} {ratio:18s} {bs[0]['tasks']:7.0f} {busy:14.3f}")
for dtype in ("bf16", "fp16"):
    c, s = rows.get((dtype, "contiguous"), []), rows.get((dtype, "segmented"), [])
    print(dtype, "segmented / contiguous per round:", " ".join(f"{b['engine_GBps'] / a['engine_GBps']:.3f}" for a, b in zip(c, s)))
