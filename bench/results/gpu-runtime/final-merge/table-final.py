import json, sys, tarfile
t = tarfile.open(sys.argv[1])
def read(name):
    try: return t.extractfile("r/" + name).read().decode()
    except Exception: return ""
for l in read("decode.json").splitlines():
    if l.strip().startswith("{"):
        r = json.loads(l)
        print(f'decode {r["backend"]} overflow={r["overflow"]} p50 {r["tbt_ms_p50"]:.3f} ms p99 {r["tbt_ms_p99"]:.3f} ms {r["tokens_per_s"]:.0f} tok/s transfer {r["transfer_share"]*100:.1f}%')
try:
    p = json.loads(read("torch_cpu_sdpa.json"))["results"]
    print("torch cpu sdpa GB/s median:", {k: round(v["GBps_median"], 1) for k, v in p.items()}, "best:", {k: round(v["GBps_best"], 1) for k, v in p.items()})
except Exception as e:
    print("torch:", e)
