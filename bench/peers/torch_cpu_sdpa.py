#!/usr/bin/env python3
"""Peer of hgca_bench_cpu's BM_Decode: PyTorch CPU scaled_dot_product_attention over the identical
selected subset (same shape, bytes and thread count), bf16 and fp16. Prints one JSON object.

Shape as BM_Decode: Hkv = 8 KV heads, G = 4 query heads each, D = 128, 16384 selected keys per head,
batch sized to HGCA_BENCH_WS_MB (default 1536) MiB of K+V. The G query heads of a KV head are its
G query rows (q [B, Hkv, G, D] against k, v [B, Hkv, S, D]): the same arithmetic as GQA decode,
without the K/V expansion that enable_gqa may cost.
"""
import argparse
import json
import os
import time

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ws-mb", type=int, default=int(os.environ.get("HGCA_BENCH_WS_MB", "1536")))
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--selected", type=int, default=16384)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--dtypes", default="bf16,fp16")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    per_head = a.selected * a.head_dim * 2 * 2
    batch = max(1, (a.ws_mb << 20) // (per_head * a.kv_heads))
    out = {"peer": "torch.nn.functional.scaled_dot_product_attention (CPU)", "torch": torch.__version__,
           "threads": torch.get_num_threads(), "batch": batch, "kv_heads": a.kv_heads, "group": a.group,
           "head_dim": a.head_dim, "selected": a.selected, "results": {}}
    for name in a.dtypes.split(","):
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]
        g = torch.Generator().manual_seed(0)
        k = torch.randn(batch, a.kv_heads, a.selected, a.head_dim, generator=g).to(dt)
        v = torch.randn(batch, a.kv_heads, a.selected, a.head_dim, generator=g).to(dt)
        q = torch.randn(batch, a.kv_heads, a.group, a.head_dim, generator=g).to(dt)
        kv_bytes = (k.numel() + v.numel()) * k.element_size()
        with torch.inference_mode():
            F.scaled_dot_product_attention(q, k, v)  # warm-up
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                F.scaled_dot_product_attention(q, k, v)
                times.append(time.perf_counter() - t0)
        times.sort()
        med = times[len(times) // 2]
        out["results"][name] = {"kv_bytes": kv_bytes, "median_s": med, "best_s": times[0],
                                "GBps_median": kv_bytes / med / 1e9, "GBps_best": kv_bytes / times[0] / 1e9}
        del k, v, q
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
