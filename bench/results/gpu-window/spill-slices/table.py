#!/usr/bin/env python3
"""Table of hgca_bench_gpu BM_WindowDecode runs and the SDPA peer: per shape the planner's path
(cluster, spill = cluster with spilled scores, combine) and the forced paths' rows (path arg ≠ 0).
Like ../fused-tail/table.py, with the path argument.
usage: table.py gpu.json sdpa.json"""
import json, re, sys
d = json.load(open(sys.argv[1]))
sdpa = {}
try:
    for r in json.load(open(sys.argv[2]))["results"]:
        sdpa[(r["batch"], r["hkv"], r["window"])] = r["us"]
except Exception as e:
    print("# sdpa:", e)
forced = {1: "forced combine", 2: "forced cluster", 3: "forced spill"}
print("B Hkv W | run | path | hgca us | KV TB/s | sdpa us | sdpa/hgca")
rows = []
for b in d["benchmarks"]:
    m = re.search(r"batch:(\d+)/hkv:(\d+)/window:(\d+)/path:(\d+)", b["name"])
    if not m or "us" not in b: continue
    B, H, W, P = map(int, m.groups())
    path = "cluster" if b.get("cluster") else "spill" if b.get("spill") else "combine"
    rows.append(((-H, B, W, P), B, H, W, forced.get(P, "planner"), path, b["us"], b["kv_TBps"]))
for _, B, H, W, run, path, us, tbps in sorted(rows):
    s = sdpa.get((B, H, W))
    print(f"{B} {H} {W} | {run} | {path} | {us:.1f} | {tbps:.2f} | " +
          (f"{s:.1f} | {s / us:.3f}" if s else "- | -"))
