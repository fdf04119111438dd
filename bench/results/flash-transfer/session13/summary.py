import json, sys, tarfile
R = sys.argv[1]; t = tarfile.open(f"{R}/json.tgz")
rows = {}
for rep in (1, 2, 3):
  for v in ("base", "new"):
    try: bs = json.load(t.extractfile(f"d2h_{v}_{rep}.json"))["benchmarks"]
    except Exception as e: print(v, rep, e); continue
    for b in bs:
      x = f'{b["GBps_median"]:.1f}'
      if "scatter_GBps" in b: x += f' ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f})'
      rows.setdefault(b["name"].split("/iter")[0].replace("BM_D2H/", ""), {}).setdefault(v, []).append(x)
for n, d in rows.items():
  print(n); [print(f"  {v:5s}", "  ".join(d.get(v, []))) for v in ("base", "new")]
