import json, sys, os
out = sys.argv[1]
new = {b["name"]: b for b in json.load(open(os.path.join(out, "transfer_d2h.json")))["benchmarks"]}
runs = json.load(open(os.path.join(out, "flash_store_runs.json")))
def pick(d, key, kb):
    for n, v in d.items():
        if n.startswith(f"BM_D2H/{key}/block_KB:{kb}/"):
            return v["GBps_median"] if isinstance(v, dict) else v
print("D2H GB/s (median)          4KB     16KB    64KB")
for key in ("flash_store", "flash_store_cold", "flash_pool", "memcpy_batch", "memcpy_per_block"):
    print(f"{key:26s}" + "".join(f"{pick(new, key, kb) or 0:8.1f}" for kb in (4, 16, 64)))
for run, d in runs.items():
    print(f"flash_store {run:14s}" + "".join(f"{pick(d, 'flash_store', kb) or 0:8.1f}" for kb in (4, 16, 64)))
for n, b in new.items():
    if n.startswith("BM_Compute"):
        print(f"{n:40s} kernel {b.get('kernel_ms_median', 0):.3f} ms beside {b.get('beside_GBps', 0):.1f} GB/s")
for label, f in (("decode base", "decode_base.json"), ("decode new ", "decode.json")):
    for line in open(os.path.join(out, f)):
        try:
            j = json.loads(line)
        except Exception:
            continue
        print(f"{label} p50 {j['tbt_ms_p50']:.3f} p99 {j['tbt_ms_p99']:.3f} tok/s {j['tokens_per_s']:.0f} transfer {100*j['transfer_share']:.1f}%")
