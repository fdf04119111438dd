"""Table of run.sh's JSON: per benchmark, per binary, the rounds' GB/s (end to end, with the copy's
and the scatter's own rates for FlashD2H; the median repetition for BM_Scatter)."""
import glob, json, re, sys

R = sys.argv[1]
rows = {}
for path in sorted(glob.glob(f"{R}/b[ts]_*_*.json")):
    m = re.match(r".*/b[ts]_(\w+?)_(\d+)\.json", path)
    variant = m.group(1)
    for b in json.load(open(path))["benchmarks"]:
        name = b["name"].split("/iterations")[0].split("/real_time")[0].split("/manual_time")[0]
        if "GBps_median" in b:
            cell = f'{b["GBps_median"]:.1f} ({b.get("copy_GBps", 0):.0f}/{b.get("scatter_GBps", 0):.0f})'
        elif b.get("aggregate_name") == "median":
            cell = f'{b["bytes_per_second"] / 1e9:.1f}'
        else:
            continue
        rows.setdefault(name, {}).setdefault(variant, []).append(cell)
for name, d in rows.items():
    print(name)
    for v in ("base", "flat"):
        print(f"  {v:5s} " + "  ".join(d.get(v, [])))
