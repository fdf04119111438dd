"""Issue 4's table from one call's folder: the engine's rows (engine-r*.json) against the DRAM read
measured beside each and PyTorch's CPU SDPA (torch-*.json, its faster run per dtype)."""
import glob
import json
import sys

R = sys.argv[1]
torch = {}
for p in sorted(glob.glob(f"{R}/torch-*.json")):
    try:
        for dt, x in json.load(open(p))["results"].items():
            torch.setdefault(dt, []).append(x["GBps_median"])
    except Exception as e:
        print("peer", p, e)
print("PyTorch CPU SDPA GB/s:", {k: [round(v, 1) for v in vs] for k, vs in torch.items()})
rows = {}
for p in sorted(glob.glob(f"{R}/engine-r*.json")):
    for x in json.load(open(p))["benchmarks"]:
        rows.setdefault(x["name"].split("/min_time")[0], []).append(x)
print(f"{'benchmark':<40} {'engine GB/s':>12} {'read GB/s':>10} {'x torch':>10} {'max/mean':>10}")
for n, xs in rows.items():
    dt = "bf16" if "dtype:2" in n else "fp16"
    t = max(torch.get(dt, [float("nan")]))
    e = " ".join("%.1f" % x["engine_GBps"] for x in xs)
    rd = " ".join("%.0f" % x["dram_read_GBps"] for x in xs)
    ratio = " ".join("%.2f" % (x["engine_GBps"] / t) for x in xs)
    bal = " ".join("%.3f" % x.get("busy_max_over_mean", 0) for x in xs)
    print(f"{n:<40} {e:>12} {rd:>10} {ratio:>10} {bal:>10}")
