#!/usr/bin/env python3
"""Table of hgca_bench_gpu BM_WindowDecode runs (one or more JSON files) and the SDPA peer, with the
decode path of each run (cluster, fused = last block, combine). Like ../cluster/table.py, which
knows only the cluster counter.
usage: table.py label=gpu.json ... [sdpa=sdpa.json]"""
import json, re, sys
runs, sdpa = {}, {}
for a in sys.argv[1:]:
    label, path = a.split("=", 1)
    try:
        d = json.load(open(path))
    except Exception as e:
        print("#", path, e); continue
    if label == "sdpa":
        for r in d["results"]:
            sdpa[(r["batch"], r["hkv"], r["window"])] = r["us"]
        continue
    runs[label] = {}
    for b in d["benchmarks"]:
        m = re.search(r"batch:(\d+)/hkv:(\d+)/window:(\d+)", b["name"])
        if not m or "us" not in b: continue
        path = "cluster" if b.get("cluster") else "fused" if b.get("fused") else "combine"
        runs[label][tuple(map(int, m.groups()))] = (b["us"], b["kv_TBps"], path)
keys = sorted({k for r in runs.values() for k in r}, key=lambda k: (-k[1], k[0], k[2]))
print("B Hkv W | " + " | ".join(f"{l} us TB/s path" for l in runs) +
      (" | sdpa us | " + " ".join(f"sdpa/{l}" for l in runs) if sdpa else ""))
for k in keys:
    row = f"{k[0]} {k[1]} {k[2]} | " + " | ".join(
        (f"{runs[l][k][0]:.1f} {runs[l][k][1]:.2f} {runs[l][k][2]}" if k in runs[l] else "-") for l in runs)
    if sdpa and k in sdpa:
        row += f" | {sdpa[k]:.1f} | " + " ".join(
            (f"{sdpa[k] / runs[l][k][0]:.3f}" if k in runs[l] else "-") for l in runs)
    print(row)
