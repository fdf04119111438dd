# Per decode step of a traced hgca-decode run: where the time of its slow steps went.
# trace file lines: layer t_enqueue t_plan_start t_plan_end t_cpu_start t_cpu_end t_commit (ns, steady clock)
import json, sys, statistics as st
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
names = ["hand-off to plan", "plan", "hand-off to cpu part", "cpu part"]
for r, tf in zip(runs, sys.argv[2:]):
    recs = [list(map(int, l.split())) for l in open(tf)]
    t = r["tbt_ms"]; steps = len(t); pre = len(recs) - 4 * steps; p50 = r["tbt_ms_p50"]
    rows = []
    for s in range(steps):
        calls = recs[pre + 4 * s: pre + 4 * s + 4]
        segs, prev_end = [], None
        for layer, t0, p0, p1, c0, c1, _ in calls:
            ref = max(t0, prev_end) if prev_end else t0
            segs.append(((p0 - ref) / 1e3, (p1 - p0) / 1e3, (c0 - p1) / 1e3, (c1 - c0) / 1e3))
            prev_end = c1
        rows.append((s, t[s], segs))
    normal = [x for x in rows if x[1] < 1.3 * p50]
    med = [[st.median(x[2][l][k] for x in normal) for k in range(4)] for l in range(4)]
    print(f"{tf}: {steps} decode steps, p50 {p50:.3f} ms, p99 {r['tbt_ms_p99']:.3f} ms")
    print("  median of the normal steps, us per layer (" + ", ".join(names) + "): " +
          " | ".join(" ".join(f"{v:.0f}" for v in m) for m in med))
    slow = [x for x in rows if x[1] > 2 * p50]
    cause = {}
    for s, tt, segs in slow:
        excess = [(segs[l][k] - med[l][k], l, k) for l in range(4) for k in range(4)]
        e, l, k = max(excess)
        cause.setdefault(names[k], []).append((s, tt, e))
    print(f"  {len(slow)} steps > 2 x p50; the segment with the largest excess over its median:")
    for k, v in sorted(cause.items(), key=lambda kv: -len(kv[1])):
        print(f"    {k:22s} {len(v):3d} steps, excess median {st.median(e for _, _, e in v):7.0f} us, max {max(e for _, _, e in v):8.0f} us (steps {', '.join(str(s) for s, _, _ in v[:8])}{'...' if len(v) > 8 else ''})")
