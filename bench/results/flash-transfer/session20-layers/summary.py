#!/usr/bin/env python3
"""GB/s of the median iteration per benchmark, over every repetition of the given Google Benchmark
JSON files: median (min–max, count), and for FlashD2H into stores the ratio of its median to the
peers' medians. Usage: summary.py FILE.json ..."""
import collections
import json
import statistics as st
import sys

runs = collections.defaultdict(list)
for path in sys.argv[1:]:
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        parts = b["name"].split("/")
        key = "/".join([parts[1]] + [p for p in parts[2:] if p.startswith(("block_KB", "slots", "layers"))])
        runs[key].append(b["GBps_median"] if "GBps_median" in b else b["bytes_per_second"] / 1e9)

med = {k: st.median(v) for k, v in runs.items()}
peer = {p: next((med[k] for k in med if k.startswith(p)), None) for p in ("memcpy_batch", "memcpy_per_block")}
print(f"{'benchmark':50s} {'GB/s median (min-max, n)':28s} {'/ batch':>8s} {'/ per-block':>12s}")
for k in sorted(runs):
    v = runs[k]
    cells = f"{med[k]:.1f} ({min(v):.1f}-{max(v):.1f}, {len(v)})"
    ratios = ""
    if k.startswith("flash_store") and all(peer.values()):
        ratios = f"{med[k] / peer['memcpy_batch']:8.2f} {med[k] / peer['memcpy_per_block']:12.2f}"
    print(f"{k:50s} {cells:28s} {ratios}")
