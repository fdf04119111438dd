import json, sys
for label, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
    for n, line in enumerate(l for l in open(path) if l.strip()):
        r = json.loads(line); t = r["tbt_ms"]; p = r["tbt_ms_p50"]
        print(f"{label} {n+1}: tok/s {r['tokens_per_s']:.0f} p50 {p:.3f} p99 {r['tbt_ms_p99']:.3f} first {t[0]:.3f} steps>2xp50 {sum(x > 2*p for x in t)}/{len(t)} transfer {100*r['transfer_share']:.1f}%")
