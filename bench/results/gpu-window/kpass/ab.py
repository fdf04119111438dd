#!/usr/bin/env python3
"""Median over interleaved runs per (label, shape) of BM_WindowDecode us, with the decode path, the
ratio to the label 'main' and, from the peer's sweep (sdpa=...), SDPA's us and SDPA / label.
usage: ab.py sdpa=sdpa.json main=a.json,b.json cand=c.json,d.json
Exit 0 when 'cand' is at least as fast as 'main' at batch 16 Hkv 8 W 16384 (the goal shape)."""
import json, re, statistics, sys
runs, sdpa = {}, {}
for a in sys.argv[1:]:
    label, paths = a.split("=", 1)
    for path in paths.split(","):
        try:
            d = json.load(open(path))
        except Exception as e:
            print("#", path, e); continue
        if label == "sdpa":
            for r in d["results"]:
                sdpa[(r["batch"], r["hkv"], r["window"])] = r["us"]
            continue
        for b in d["benchmarks"]:
            m = re.search(r"batch:(\d+)/hkv:(\d+)/window:(\d+)", b["name"])
            if not m or "us" not in b: continue
            path_ = "cluster" if b.get("cluster") else "combine"
            runs.setdefault(label, {}).setdefault(tuple(map(int, m.groups())), []).append((b["us"], path_))
med = {l: {k: statistics.median(u for u, _ in v) for k, v in r.items()} for l, r in runs.items()}
keys = sorted({k for r in runs.values() for k in r}, key=lambda k: (-k[1], k[0], k[2]))
print("B Hkv W | " + " | ".join(f"{l}: median us (runs) path, main/{l}, sdpa/{l}" for l in runs) + " | sdpa us")
for k in keys:
    cells = []
    for l in runs:
        if k not in runs[l]: cells.append("-"); continue
        m = med[l][k]
        cells.append(f"{m:.1f} ({' '.join(f'{u:.1f}' for u, _ in runs[l][k])}) {runs[l][k][0][1]}"
                     + (f", {med['main'][k] / m:.3f}" if k in med.get("main", {}) else "")
                     + (f", {sdpa[k] / m:.3f}" if k in sdpa else ""))
    print(f"{k[0]} {k[1]} {k[2]} | " + " | ".join(cells) + (f" | {sdpa[k]:.1f}" if k in sdpa else ""))
goal = (16, 8, 16384)
ok = goal in med.get("cand", {}) and goal in med.get("main", {}) and med["cand"][goal] <= med["main"][goal]
print("final: cand" if ok else "final: main")
sys.exit(0 if ok else 1)
