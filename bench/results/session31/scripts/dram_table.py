#!/usr/bin/env python3
"""Session 31: engine GB/s and its ratio to the DRAM read measured just before it, per round, for the
base and new builds (dev/dram-{base,new}-rN.json, from scripts/dev-engine.sh)."""
import glob, json, os, sys
d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "dev")
rows = {}
for p in sorted(glob.glob(os.path.join(d, "dram-*-r*.json"))):
    build, rnd = os.path.basename(p)[5:-5].split("-r")
    for x in json.load(open(p))["benchmarks"]:
        name = x["name"].split("/min_time")[0]
        rows.setdefault(name, {}).setdefault(build, []).append(f"{x['engine_GBps']:.1f}/{x['dram_read_GBps']:.0f}={x['ratio_to_dram']:.2f}")
print("| benchmark | base: engine/read=ratio per round | new |")
print("| --- | --- | --- |")
for n, v in rows.items():
    print(f"| {n} | {' '.join(v.get('base', []))} | {' '.join(v.get('new', []))} |")
