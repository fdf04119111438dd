#!/usr/bin/env python3
"""A/B table of one call of BM_WindowDecode builds against SDPA, shared by finish/, scores-global/ and
persistent/: python3 ab_summary.py CALL_FOLDER [BUILD_A,BUILD_B]. CALL_FOLDER/json.tgz holds
{build}_{round}.json for rounds 1-3 and sdpa.json; the default builds are base,new."""
import json, sys, tarfile, statistics
R = sys.argv[1]; t = tarfile.open(f"{R}/json.tgz")
rows = {}; paths = {}; V = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("base", "new")
for r in (1, 2, 3):
  for v in V:
    try:
      for b in json.load(t.extractfile(f"{v}_{r}.json"))["benchmarks"]:
        n = b["name"].split("/iter")[0].split("/manual")[0].replace("BM_WindowDecode/", "")
        rows.setdefault(n, {}).setdefault(v, []).append(b["real_time"])
        paths.setdefault(n, {})[v] = int(b.get("cluster", -1))
    except Exception as e: print(v, r, e)
sd = {}
try:
  for x in json.load(t.extractfile("sdpa.json"))["results"]: sd[(x["batch"], x["hkv"], x["window"])] = x["us"]
except Exception as e: print("sdpa", e)
print(f'{"shape":32s} path {"base (3 rounds)":>22s} {"new (3 rounds)":>22s} {"sdpa":>7s}  base/new  sdpa/base sdpa/new')
for n, d in rows.items():
  k = dict(p.split(":") for p in n.split("/") if ":" in p)
  s = sd.get((int(k["batch"]), int(k["hkv"]), int(k["window"])), float("nan"))
  med = {v: statistics.median(d[v]) for v in V if v in d}
  cells = " ".join(" ".join(f"{x:6.1f}" for x in d.get(v, [])).rjust(22) for v in V)
  pc = "".join("C" if paths[n].get(v) == 1 else "s" for v in V)
  print(f"{n:32s} {pc:4s} {cells} {s:7.1f}  {med[V[0]]/med[V[1]]:.3f}  {s/med[V[0]]:.3f} {s/med[V[1]]:.3f}")
