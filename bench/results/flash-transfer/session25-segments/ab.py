#!/usr/bin/env python3
"""Main against segments for one or more calls' data: per benchmark, GB/s of a run's median
iteration, median (min-max, runs) over every run of both builds, the ratio segments / main, and the
peers' medians. Usage: ab.py data/call1.tgz [data/call3.tgz ...]"""
import collections
import json
import statistics as st
import sys
import tarfile

runs = collections.defaultdict(lambda: collections.defaultdict(list))  # build -> benchmark -> GB/s
for path in sys.argv[1:]:
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if not m.name.endswith(".json"):
                continue
            build = m.name.split("/")[-1].split("-r")[0]
            for b in json.load(tar.extractfile(m))["benchmarks"]:
                if b.get("run_type", "iteration") != "iteration":
                    continue
                parts = b["name"].split("/")
                key = "/".join([parts[1]] + [p for p in parts[2:] if p.startswith(("slots", "layers"))])
                runs[build][key].append(b["GBps_median"])


def cell(v):
    return f"{st.median(v):.1f} ({min(v):.1f}-{max(v):.1f}, {len(v)})"


print(f"| benchmark (16 KB blocks, 10 % selected) | main | segments | segments / main |")
print("| --- | --- | --- | --- |")
for k in sorted(runs["main"]):
    a, b = runs["main"][k], runs["segments"].get(k)
    ratio = f"{st.median(b) / st.median(a):.2f}" if b and not k.startswith("memcpy") else ""
    print(f"| {k} | {cell(a)} | {cell(b) if b else '-'} | {ratio} |")
