import json, sys, os
out = sys.argv[1]
def bench(name):
    try:
        return {b["name"]: b for b in json.load(open(os.path.join(out, name)))["benchmarks"]}
    except Exception as e:
        print("no", name, e); return {}
new, base, cached = bench("transfer_d2h.json"), bench("transfer_d2h_base.json"), bench("transfer_d2h_cached.json")
def gbps(src, key, kb):
    for n, b in src.items():
        if n.startswith(f"BM_D2H/{key}/block_KB:{kb}/"):
            return b.get("GBps_median")
print("D2H GB/s (median)          4KB     16KB    64KB")
for label, key, src in (("flash_store", "flash_store", new), ("flash_store (base)", "flash_store", base),
                        ("flash_store (cached st.)", "flash_store", cached), ("flash_store_cold", "flash_store_cold", new),
                        ("flash_pool", "flash_pool", new), ("memcpy_batch", "memcpy_batch", new),
                        ("memcpy_per_block", "memcpy_per_block", new)):
    print(f"{label:26s}" + "".join(f"{v:8.1f}" if v else "       -" for v in (gbps(src, key, kb) for kb in (4, 16, 64))))
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
