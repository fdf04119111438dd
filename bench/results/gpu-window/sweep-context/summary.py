#!/usr/bin/env python3
"""The sweeps of calls 2 and 3 side by side: per shape, hgca's and SDPA's median µs over the
rounds, each round's ratio SDPA / hgca (> 1: hgca faster) and hgca's KV read rate; the lowest
ratio over the issue's shapes (Hkv 32 and 8) and over all."""
import glob, json, statistics, sys

d = sys.argv[1]
ours, sdpa = {}, {}
for f in sorted(glob.glob(f"{d}/hgca_round*.json")):
    for b in json.load(open(f))["benchmarks"]:
        a = b["name"].split("/")
        key = tuple(int(x.split(":")[1]) for x in a[1:4])
        ours.setdefault(key, []).append((b["us"], b["kv_TBps"]))
for f in sorted(glob.glob(f"{d}/sdpa_round*.json")):
    for r in json.load(open(f))["results"]:
        sdpa.setdefault((r["batch"], r["hkv"], r["window"]), []).append(r["us"])
print(f"{'batch':>5} {'hkv':>4} {'window':>6} {'hgca us':>8} {'SDPA us':>8} {'ratio':>6}  "
      f"{'rounds (SDPA/hgca)':20} {'hgca TB/s':>9}")
worst, worst_goal = None, None
for key in sorted(ours):
    o = [u for u, _ in ours[key]]
    line = f"{key[0]:5} {key[1]:4} {key[2]:6} {statistics.median(o):8.1f} "
    if key in sdpa:
        s = sdpa[key]
        rs = [b / a for a, b in zip(o, s)]
        ratio = statistics.median(s) / statistics.median(o)
        worst = min(worst or ratio, ratio)
        if key[1] in (32, 8):
            worst_goal = min(worst_goal or ratio, ratio)
        line += f"{statistics.median(s):8.1f} {ratio:6.3f}  {' '.join(f'{x:.3f}' for x in rs):20} "
    else:
        line += f"{'-':>8} {'-':>6}  {'':20} "
    line += f"{statistics.median(t for _, t in ours[key]):9.2f}"
    print(line)
if worst_goal is not None:
    print(f"lowest ratio of medians: {worst_goal:.3f} at Hkv 32 and 8 (the issue's shapes), "
          f"{worst:.3f} over all")
