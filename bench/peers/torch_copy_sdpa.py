#!/usr/bin/env python3
"""Peer of hgca_bench_layer (BM_DecodeLayer): the obvious alternative to a hybrid decode layer —
copy every offloaded K/V (context − W tokens, pinned host memory) back to the GPU, then attend to
the whole context with PyTorch's scaled_dot_product_attention. Hq 32, Hkv 8 (enable_gqa=True),
D 128, bf16, W 1024. CUDA-event timed, median of 15 after warm-up. Prints JSON."""
import json
import sys

import torch
import torch.nn.functional as F

HQ, HKV, D, W = 32, 8, 128, 1024


def bench(context, batch, reps=15):
    off = context - W
    dev_k = torch.randn(batch, HKV, context, D, device="cuda", dtype=torch.bfloat16)
    dev_v = torch.randn_like(dev_k)
    host_k = torch.empty(batch, HKV, off, D, dtype=torch.bfloat16, pin_memory=True)
    host_v = torch.empty_like(host_k, pin_memory=True)
    host_k.copy_(dev_k[:, :, :off])  # random, never zeros
    host_v.copy_(dev_v[:, :, :off])
    q = torch.randn(batch, HQ, 1, D, device="cuda", dtype=torch.bfloat16)

    def layer():
        dev_k[:, :, :off].copy_(host_k, non_blocking=True)
        dev_v[:, :, :off].copy_(host_v, non_blocking=True)
        return F.scaled_dot_product_attention(q, dev_k, dev_v, enable_gqa=True)

    def sdpa_only():
        return F.scaled_dot_product_attention(q, dev_k, dev_v, enable_gqa=True)

    out = {}
    for name, fn in (("copy_sdpa", layer), ("sdpa_only", sdpa_only)):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        out[name + "_ms"] = times[len(times) // 2]
    del dev_k, dev_v, host_k, host_v
    torch.cuda.empty_cache()
    return {"context": context, "batch": batch, "offloaded_bytes": 2 * batch * HKV * off * D * 2, **out}


def main():
    res = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": []}
    for context in (32768, 131072):
        for batch in (1, 16):
            r = bench(context, batch)
            res["results"].append(r)
            print(f"# ctx {context} B{batch}: copy+SDPA {r['copy_sdpa_ms']:.2f} ms, SDPA alone "
                  f"{r['sdpa_only_ms']:.3f} ms", file=sys.stderr, flush=True)
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
