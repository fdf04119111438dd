import json, sys, statistics
out = sys.argv[1]
try:
    b = json.load(open(f"{out}/bench_cpu.json"))["benchmarks"]
    t = json.load(open(f"{out}/torch_cpu_sdpa.json"))["results"]
    print("engine (GPU machine CPU): name | engine GB/s | DRAM GB/s | ratio | vs torch median | busy")
    for x in b:
        dt = "bf16" if "dtype:2" in x["name"] else "fp16"
        peer = t[dt]["GBps_median"]
        print(f'{x["name"][:48]:48s} {x["engine_GBps"]:7.1f} {x["dram_read_GBps"]:7.1f} {x["ratio_to_dram"]:5.2f} {x["engine_GBps"]/peer:5.2f}x {x.get("busy_max_over_mean",0):.3f}')
    print("torch:", {k: round(v["GBps_median"], 1) for k, v in t.items()}, "best", {k: round(v["GBps_best"], 1) for k, v in t.items()})
except Exception as e:
    print("engine table:", e)
try:
    rows = [json.loads(l) for l in open(f"{out}/decode.json") if l.strip().startswith("{")]
    for r in rows:
        moved = sum(l["overflow_items"] for l in r["layers"])
        print(f'decode {r["backend"]} overflow={r["overflow"]:6s} p50 {r["tbt_ms_p50"]:.3f} ms p99 {r["tbt_ms_p99"]:.3f} ms {r["tokens_per_s"]:.0f} tok/s transfer {r["transfer_share"]*100:.1f}% items moved {moved}')
except Exception as e:
    print("decode table:", e)
