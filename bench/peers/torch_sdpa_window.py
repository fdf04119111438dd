#!/usr/bin/env python3
"""Peer of hgca_bench_gpu (BM_WindowDecode): PyTorch scaled_dot_product_attention decode on the
same shapes. q [B, Hq, 1, D], k/v [B, Hkv, W + 1, D] bf16 (the window plus the new token, as the
hgca kernel attends), GQA through enable_gqa=True (no repeated K/V heads), CUDA-event timed over
back-to-back calls rotating among enough K/V sets to exceed the 60 MB L2. Prints JSON."""
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HQ, D = 32, 128
MIN_WORKING_SET = 256 << 20
MAX_SETS = 64
# Every shape's tensors stay allocated until the program ends, as hgca_bench_gpu keeps its
# buffers: for seconds after gigabytes are freed, the next shape runs several per cent slower
# (bench/results/gpu-window/sweep-context/).
_KEPT = []


def backend_for(q, k, v):
    """The first backend that takes these inputs, in PyTorch's own preference order."""
    for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
              SDPBackend.MATH):
        try:
            with sdpa_kernel([b]):
                F.scaled_dot_product_attention(q, k, v, enable_gqa=k.shape[1] != q.shape[1])
            return b
        except RuntimeError:
            continue
    raise RuntimeError("no SDPA backend ran")


def bench(batch, hkv, window, trials=7):
    keys = window + 1
    kv_bytes = 2 * batch * hkv * window * D * 2  # the window's K and V, as hgca reports
    set_bytes = 2 * batch * hkv * keys * D * 2
    n_sets = max(1, min(MAX_SETS, math.ceil(MIN_WORKING_SET / set_bytes)))
    gen = torch.Generator(device="cuda").manual_seed(0)
    sets = []
    for _ in range(n_sets):
        q = torch.randn(batch, HQ, 1, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(batch, hkv, keys, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(batch, hkv, keys, D, device="cuda", dtype=torch.bfloat16, generator=gen)
        sets.append((q, k, v))
    gqa = hkv != HQ
    backend = backend_for(*sets[0])
    reps = max(n_sets, 8)
    times = []
    with sdpa_kernel([backend]):
        for q, k, v in sets:  # warm-up
            F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
        torch.cuda.synchronize()
        for _ in range(trials):
            inner = max(1, int(0.05 / (reps * (times[-1] if times else 1e-3))))
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for it in range(inner):
                for r in range(reps):
                    q, k, v = sets[r % n_sets]
                    F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3 / (inner * reps))
    _KEPT.append(sets)
    times.sort()
    t = times[len(times) // 2]
    return {"batch": batch, "hkv": hkv, "window": window, "us": t * 1e6,
            "kv_TBps": kv_bytes / t * 1e-12, "sets": n_sets, "backend": backend.name,
            "gqa": "enable_gqa=True" if gqa else "none (Hq == Hkv)"}


def main():
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": []}
    for batch in (1, 16, 64):
        for hkv in (32, 8, 4, 2):
            for window in (1024, 4096, 16384):
                r = bench(batch, hkv, window)
                out["results"].append(r)
                print(f"# B{batch} Hkv{hkv} W{window}: {r['us']:.1f} us {r['kv_TBps']:.2f} TB/s "
                      f"{r['backend']}", file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
