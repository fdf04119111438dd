import json, sys, os
out = sys.argv[1]
def bench(path):
    try:
        return {b["name"]: b for b in json.load(open(path))["benchmarks"]}
    except Exception as e:
        print("no", path, e); return {}
new, base = bench(os.path.join(out, "transfer_d2h.json")), bench(os.path.join(out, "transfer_d2h_base.json"))
print("D2H GB/s (median)   4KB    16KB    64KB")
rows = [("flash_store", new), ("flash_store_cold", new), ("flash_pool", new), ("memcpy_batch", new),
        ("memcpy_per_block", new), ("flash_store (base)", base)]
for name, src in rows:
    key = name.split(" ")[0]
    vals = [b.get("GBps_median") for kb in (4, 16, 64) for n, b in src.items()
            if n.startswith(f"BM_D2H/{key}/block_KB:{kb}/")]
    print(f"{name:20s}" + "".join(f"{v:8.1f}" for v in vals))
for label, f in (("decode base", "decode_base.json"), ("decode new ", "decode.json")):
    for line in open(os.path.join(out, f)):
        try:
            j = json.loads(line)
        except Exception:
            continue
        print(f"{label} p50 {j['tbt_ms_p50']:.3f} p99 {j['tbt_ms_p99']:.3f} tok/s {j['tokens_per_s']:.0f} transfer {100*j['transfer_share']:.1f}%")
