#!/usr/bin/env python3
"""Median over repeated runs per (label, shape) of BM_WindowDecode us, against the SDPA runs' median.
usage: compare.py goal_exit sdpa=a.json,b.json label=x.json,y.json ...
Exit 0 when the label 'cand' at batch 16 Hkv 8 W 16384 is at least as fast as SDPA's median."""
import json, re, statistics, sys
runs, sdpa = {}, {}
for a in sys.argv[2:]:
    label, paths = a.split("=", 1)
    for path in paths.split(","):
        try:
            d = json.load(open(path))
        except Exception as e:
            print("#", path, e); continue
        if label == "sdpa":
            for r in d["results"]:
                sdpa.setdefault((r["batch"], r["hkv"], r["window"]), []).append(r["us"])
            continue
        for b in d["benchmarks"]:
            m = re.search(r"batch:(\d+)/hkv:(\d+)/window:(\d+)", b["name"])
            if not m or "us" not in b: continue
            path_ = "cluster" if b.get("cluster") else "combine"
            runs.setdefault(label, {}).setdefault(tuple(map(int, m.groups())), []).append((b["us"], path_))
keys = sorted({k for r in runs.values() for k in r}, key=lambda k: (-k[1], k[0], k[2]))
print("B Hkv W | " + " | ".join(f"{l}: median us (runs) path, sdpa/it" for l in runs) + " | sdpa us (runs)")
for k in keys:
    sd = statistics.median(sdpa[k]) if k in sdpa else None
    cells = []
    for l in runs:
        if k not in runs[l]: cells.append("-"); continue
        us = [u for u, _ in runs[l][k]]
        med = statistics.median(us)
        cells.append(f"{med:.1f} ({' '.join(f'{u:.1f}' for u in us)}) {runs[l][k][0][1]}" +
                     (f", {sd / med:.3f}" if sd else ""))
    print(f"{k[0]} {k[1]} {k[2]} | " + " | ".join(cells) +
          (f" | {sd:.1f} ({' '.join(f'{u:.1f}' for u in sdpa[k])})" if sd else ""))
goal = (16, 8, 16384)
if sys.argv[1] == "goal_exit":
    ok = goal in sdpa and goal in runs.get("cand", {}) and \
        statistics.median(u for u, _ in runs["cand"][goal]) <= statistics.median(sdpa[goal])
    print("goal reached" if ok else "goal not reached")
    sys.exit(0 if ok else 1)
