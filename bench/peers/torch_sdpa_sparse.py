#!/usr/bin/env python3
"""Peer of hgca_bench_gpu_sparse: PyTorch scaled_dot_product_attention over the same gathered context
sets. Decode: q [B, 32, 1, 128], k/v [B, 8, n, 128] bf16 with n = 10 % of the context; appends: q [1,
32, rows, 128] over the same k/v, no mask (every context entry is older than every new token). GQA
through enable_gqa=True. CUDA-event timed over back-to-back calls rotating among enough K/V sets to
exceed the 60 MB L2; median of 7 trials. Prints JSON."""
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HQ, HKV, D = 32, 8, 128
SELECTED = 0.10
MIN_WORKING_SET = 256 << 20
MAX_SETS = 64


def backend_for(q, k, v):
    """The first backend that takes these inputs, in PyTorch's own preference order."""
    for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
              SDPBackend.MATH):
        try:
            with sdpa_kernel([b]):
                F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            return b
        except RuntimeError:
            continue
    raise RuntimeError("no SDPA backend ran")


def bench(batch, context, rows, trials=7):
    n = round(context * SELECTED)
    kv_bytes = 2 * batch * HKV * n * D * 2
    n_sets = max(1, min(MAX_SETS, math.ceil(MIN_WORKING_SET / kv_bytes)))
    gen = torch.Generator(device="cuda").manual_seed(0)
    sets = []
    for _ in range(n_sets):
        q = torch.randn(batch, HQ, rows, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(batch, HKV, n, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(batch, HKV, n, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        sets.append((q, k, v))
    backend = backend_for(*sets[0])
    reps = max(n_sets, 8)
    times = []
    with sdpa_kernel([backend]):
        for q, k, v in sets:  # warm-up
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        for _ in range(trials):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for r in range(reps):
                q, k, v = sets[r % n_sets]
                F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3 / reps)
    del sets
    torch.cuda.empty_cache()
    times.sort()
    t = times[len(times) // 2]
    return {"batch": batch, "context": context, "rows": rows, "n_per_head": n, "us": t * 1e6,
            "kv_GBps": kv_bytes / t * 1e-9, "row_GBps": kv_bytes * rows / t * 1e-9,
            "TFLOPs": 4.0 * D * n * batch * HKV * rows * (HQ // HKV) / t * 1e-12, "sets": n_sets,
            "backend": backend.name}


def main():
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": []}
    shapes = [(b, c, 1) for b in (1, 16) for c in (32768, 131072)] + [(1, 32768, r) for r in (16, 128, 512)]
    for batch, context, rows in shapes:
        r = bench(batch, context, rows)
        out["results"].append(r)
        print(f"# B{batch} ctx{context} rows{rows}: {r['us']:.1f} us {r['kv_GBps']:.0f} GB/s "
              f"{r['TFLOPs']:.2f} TFLOP/s {r['backend']}", file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
