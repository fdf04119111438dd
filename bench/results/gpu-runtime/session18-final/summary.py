#!/usr/bin/env python3
"""Session 18's final call: the zero-copy merge, the hybrid layer against copy + attend (C++) and
copy + SDPA (PyTorch, same call), hgca-decode's default run. Argument: the folder of the results."""
import json, sys

R = sys.argv[1]
layer = json.load(open(f"{R}/layer.json"))["benchmarks"]
print("merge (32 x 32 x 128 fp32 from mapped pinned memory), median of 5 reps, us:")
for b in layer:
    if b["name"].startswith("BM_MergeZeroCopy") and b.get("aggregate_name") == "median":
        q, g = b["name"].split("/")[1:3]
        what = "one launch, idle stream" if (q, g) == ("1", "0") else \
            "16 queued, per merge" if q == "16" else "one launch behind the gate"
        print(f"  {what:28} {b['real_time']:6.2f}")
peer = {(r["context"], r["batch"]): r for r in json.load(open(f"{R}/copy_sdpa.json"))["results"]}
rows = {}
for b in layer:
    if b["name"].startswith("BM_DecodeLayer"):
        ctx, batch, mode = (int(x) for x in b["name"].split("/")[1:4])
        rows.setdefault((ctx, batch), {})[mode] = b["real_time"]
print("\ncontext batch | hybrid ms (poll) | copy+attend ms | copy+SDPA ms | SDPA alone ms | copy+SDPA / hybrid")
for (ctx, batch), m in sorted(rows.items()):
    p = peer[(ctx, batch)]
    print(f"{ctx:7} {batch:5} | {m[1]:16.3f} | {m[0]:14.3f} | {p['copy_sdpa_ms']:12.3f} | "
          f"{p['sdpa_only_ms']:13.3f} | {p['copy_sdpa_ms'] / m[1]:6.1f}x")
print("\nhgca-decode --json (default run):")
for line in open(f"{R}/decode.json"):
    if line.startswith("{"):
        j = json.loads(line)
        print(f"  backend {j.get('backend')} p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms "
              f"tokens/s {j['tokens_per_s']:.0f} transfer share {j.get('transfer_share', 0):.3f}")
