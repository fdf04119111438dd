#!/usr/bin/env python3
"""The G 16 decode shapes of calls 5 and 6: per shape the median µs over the rounds of main (no
split), the split, the split with 128 slices at most (call 6, when present) and SDPA, and the
ratios split / main speed-up and SDPA / split (> 1: hgca faster)."""
import glob, json, statistics, sys

d = sys.argv[1]
def ours(prefix):
    out = {}
    for f in sorted(glob.glob(f"{d}/{prefix}_round*.json")):
        for b in json.load(open(f))["benchmarks"]:
            key = tuple(int(x.split(":")[1]) for x in b["name"].split("/")[1:4])
            out.setdefault(key, []).append(b["us"])
    return out
base, new, s128, sdpa = ours("base"), ours("hgca"), ours("s128"), {}
for f in sorted(glob.glob(f"{d}/sdpa_round*.json")):
    for r in json.load(open(f))["results"]:
        sdpa.setdefault((r["batch"], r["hkv"], r["window"]), []).append(r["us"])
med = statistics.median
print(f"{'batch':>5} {'window':>6} {'main us':>9} {'split us':>9} {'128 us':>8} {'SDPA us':>8} "
      f"{'speed-up':>8} {'SDPA/split':>10}")
for k in sorted(new):
    more = f"{med(s128[k]):8.1f}" if k in s128 else f"{'-':>8}"
    print(f"{k[0]:5} {k[2]:6} {med(base[k]):9.1f} {med(new[k]):9.1f} {more} {med(sdpa[k]):8.1f} "
          f"{med(base[k]) / med(new[k]):7.1f}x {med(sdpa[k]) / med(new[k]):10.3f}")
