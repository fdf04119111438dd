#!/usr/bin/env python3
"""Peer of hgca_bench_cpu's BM_Decode: PyTorch CPU scaled_dot_product_attention over the identical
selected subset (same shape, bytes and thread count), bf16 and fp16. Prints one JSON object.

Shape as BM_Decode: Hkv = 8 KV heads, G = 4 query heads each, D = 128, 16384 selected keys per head,
batch sized to HGCA_BENCH_WS_MB (default 1536) MiB of K+V. The G query heads of a KV head are its
G query rows (q [B, Hkv, G, D] against k, v [B, Hkv, S, D]): the same arithmetic as GQA decode,
without the K/V expansion that enable_gqa may cost.

Fair to PyTorch: its tensors on transparent huge pages (THP_MEM_ALLOC_ENABLE=1, as hgca's memory is),
each SDPA backend that runs on the CPU timed (default choice, flash, math) and the fastest reported
as the result ("backend" says which), threads = the CPUs this process may run on.
"""
import argparse
import contextlib
import json
import os
import time

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # read by PyTorch's CPU allocator at import

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ws-mb", type=int, default=int(os.environ.get("HGCA_BENCH_WS_MB", "1536")))
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--selected", type=int, default=16384)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--dtypes", default="bf16,fp16")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    per_head = a.selected * a.head_dim * 2 * 2
    batch = max(1, (a.ws_mb << 20) // (per_head * a.kv_heads))
    out = {"peer": "torch.nn.functional.scaled_dot_product_attention (CPU)", "torch": torch.__version__,
           "threads": torch.get_num_threads(), "batch": batch, "kv_heads": a.kv_heads, "group": a.group,
           "head_dim": a.head_dim, "selected": a.selected, "thp": thp_mode(),
           "thp_mem_alloc_enable": os.environ.get("THP_MEM_ALLOC_ENABLE"), "results": {}}
    for name in a.dtypes.split(","):
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]
        g = torch.Generator().manual_seed(0)
        k = torch.randn(batch, a.kv_heads, a.selected, a.head_dim, generator=g).to(dt)
        v = torch.randn(batch, a.kv_heads, a.selected, a.head_dim, generator=g).to(dt)
        q = torch.randn(batch, a.kv_heads, a.group, a.head_dim, generator=g).to(dt)
        kv_bytes = (k.numel() + v.numel()) * k.element_size()
        per_backend = {}
        for label, backends in (("default", None), ("flash", [SDPBackend.FLASH_ATTENTION]), ("math", [SDPBackend.MATH])):
            try:
                with torch.inference_mode(), (sdpa_kernel(backends) if backends else contextlib.nullcontext()):
                    F.scaled_dot_product_attention(q, k, v)  # warm-up
                    times = []
                    for _ in range(a.reps):
                        t0 = time.perf_counter()
                        F.scaled_dot_product_attention(q, k, v)
                        times.append(time.perf_counter() - t0)
            except RuntimeError as e:  # a backend that does not take these inputs
                per_backend[label] = {"error": str(e)[:200]}
                continue
            times.sort()
            med = times[len(times) // 2]
            per_backend[label] = {"median_s": med, "best_s": times[0], "GBps_median": kv_bytes / med / 1e9,
                                  "GBps_best": kv_bytes / times[0] / 1e9}
        timed = {k_: x for k_, x in per_backend.items() if "GBps_median" in x}
        fastest = max(timed, key=lambda k_: timed[k_]["GBps_median"])
        out["results"][name] = dict(timed[fastest], kv_bytes=kv_bytes, backend=fastest, backends=per_backend)
        del k, v, q
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
