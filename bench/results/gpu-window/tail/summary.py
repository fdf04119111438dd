"""Tables of run.sh's results: the goal shape alone (base, new, SDPA per round), the sweep, clocks."""
import collections, csv, glob, json, statistics as st, sys

R = sys.argv[1]


def times(prefix):
    d = collections.defaultdict(lambda: collections.defaultdict(list))
    plan = {}
    for f in sorted(glob.glob(f"{R}/{prefix}base_*.json") + glob.glob(f"{R}/{prefix}new_*.json")):
        v = f.split("/")[-1][len(prefix):].rsplit("_", 1)[0]
        for b in json.load(open(f))["benchmarks"]:
            k = b["name"].split("/iter")[0].replace("BM_WindowDecode/", "")
            d[k][v].append(b["real_time"])
            if v == "new":
                plan[k] = (int(b.get("cluster", 0)), int(b.get("slices", 0)), int(b.get("tail_seqs", 0)), int(b.get("tail_slices", 0)))
    return d, plan


g, _ = times("g")
sdpa = [json.loads(l)["us"] for l in open(f"{R}/sdpa_alone.txt") if l.startswith("{")]
k = next(iter(g))
print(f"Goal shape alone ({k}), per round: base / new / SDPA, µs")
for i, (b, n, s) in enumerate(zip(g[k]["base"], g[k]["new"], sdpa)):
    print(f"  round {i + 1}: {b:.1f} / {n:.1f} / {s:.1f}")
mb, mn, ms = st.median(g[k]["base"]), st.median(g[k]["new"]), st.median(sdpa)
print(f"  medians: base {mb:.1f}, new {mn:.1f}, SDPA {ms:.1f}: new/base speed {mb / mn:.3f}, "
      f"SDPA/new {ms / mn:.3f}, SDPA/base {ms / mb:.3f}")

s, plan = times("s")
try:
    peer = {(r["batch"], r["hkv"], r["window"]): r["us"] for r in json.load(open(f"{R}/sdpa_sweep.json"))["results"]}
except Exception:
    peer = {}
print("\nSweep (min of 2 runs each, µs); plan of new: path (C cluster, s split + combine), slices, tail")
print(f"{'shape':32s} {'base':>8s} {'new':>8s} {'base/new':>8s} {'plan':>12s} {'SDPA':>8s} {'SDPA/new':>8s}")
for k, v in s.items():
    bb, nn = min(v["base"], default=float("nan")), min(v["new"])
    c, sl, ts, tn = plan.get(k, (0, 0, 0, 0))
    p = f"{'C' if c else 's'}{sl}" + (f" +{ts}x{tn}" if ts else "")
    parts = dict(x.split(":") for x in k.split("/") if ":" in x)
    sp = peer.get((int(parts["batch"]), int(parts["hkv"]), int(parts["window"])))
    print(f"{k:32s} {bb:8.1f} {nn:8.1f} {bb / nn:8.3f} {p:>12s} " + (f"{sp:8.1f} {sp / nn:8.3f}" if sp else f"{'-':>8s} {'-':>8s}"))

rows = list(csv.reader(open(f"{R}/clocks.csv")))[1:]
sm = [int(r[1].split()[0]) for r in rows if len(r) > 4 and r[1].strip().split()[0].isdigit()]
pw = [float(r[3].split()[0]) for r in rows if len(r) > 4 and r[3].strip().split()[0].replace(".", "").isdigit()]
if sm:
    print(f"\nSM clock over the call: min {min(sm)}, median {st.median(sm)}, max {max(sm)} MHz; "
          f"power max {max(pw):.0f} W ({len(sm)} samples)")
