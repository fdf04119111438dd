#!/usr/bin/env python3
"""Session 27's tables from one call's folder (or its .tgz): the context caches' first segment at
128 and 16 KiB. Usage: summary.py DIR|call.tgz. Reads d2h-KB-rN.json (BM_D2H into stores),
cpu-KB-rN.json (BM_DecodeVaried*), gpu-KB-rN.json (BM_SparseDecodeHost), decode-{pre,bin}-N.json."""
import glob
import json
import os
import re
import sys
import tarfile
import tempfile


def folder(path):
    if not path.endswith(".tgz"):
        return path
    tmp = tempfile.mkdtemp()
    with tarfile.open(path) as tar:
        tar.extractall(tmp)
    return os.path.join(tmp, os.listdir(tmp)[0])


def rounds(d, kind):
    """(kb, round, benchmarks) of every kind-KB-rN.json, by round."""
    out = []
    for p in glob.glob(f"{d}/{kind}-*-r*.json"):
        kb, r = map(int, re.search(rf"{kind}-(\d+)-r(\d+)\.json$", p).groups())
        out.append((kb, r, json.load(open(p))["benchmarks"]))
    return sorted(out, key=lambda x: (x[1], -x[0]))


def median(v):
    s = sorted(v)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def table(title, rows, unit):
    """rows: {(label, kb): [value per round]}; prints each with its median, then 16 KiB over 128 KiB."""
    if not rows:
        return
    print(f"\n{title}")
    for (label, kb), v in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
        print(f"  {label:34s} {kb:4d} KiB  " + " ".join(f"{x:6.1f}" for x in v) + f"  median {median(v):6.1f} {unit}")
    for label in sorted({l for l, _ in rows}):
        a, b = rows.get((label, 128), []), rows.get((label, 16), [])
        if a and b:
            print(f"  {label:34s} 16 / 128 KiB: {median(b) / median(a):.3f} (medians)")


d = folder(sys.argv[1])
d2h, cpu, gpu = {}, {}, {}
for kb, r, bs in rounds(d, "d2h"):
    for b in bs:
        n = b["name"]
        label = ("fresh" if "/flash_store/" in n else "steady_varied") + " layers " + re.search(r"layers:(\d+)", n).group(1)
        d2h.setdefault((label, kb), []).append(b["GBps_median"])
for kb, r, bs in rounds(d, "cpu"):
    for b in bs:
        label = ("segmented " if "Segmented" in b["name"] else "contiguous ") + ("bf16" if "dtype:2" in b["name"] else "fp16")
        cpu.setdefault((label, kb), []).append(b["engine_GBps"])
for kb, r, bs in rounds(d, "gpu"):
    for b in bs:
        m = re.search(r"batch:(\d+)/context:(\d+)/segments:(\d)", b["name"])
        label = f"batch {m.group(1)} context {m.group(2)} " + ("segments" if m.group(3) == "1" else "contiguous")
        gpu.setdefault((label, kb), []).append(b["kv_GBps"])
table("FlashD2H into stores (GB/s per round)", d2h, "GB/s")
table("CPU engine, BM_DecodeVaried (engine GB/s per round)", cpu, "GB/s")
table("GPU kernel over mapped host memory, BM_SparseDecodeHost (GB/s per round)", gpu, "GB/s")
dec = {}
for p in sorted(glob.glob(f"{d}/decode-*-*.json")):
    b = re.search(r"decode-(\w+)-\d+\.json$", p).group(1)
    j = json.load(open(p))
    dec.setdefault(b, []).append((j["tbt_ms_p50"], j["tbt_ms_p99"], j["transfer_share"]))
if dec:
    print("\nhgca-decode default run (pre: 128 KiB, bin: 16 KiB): tbt p50 / p99 ms, transfer share")
    for b, v in dec.items():
        print(f"  {b:4s} " + "  ".join(f"{p50:.3f} / {p99:.3f} / {sh:.3f}" for p50, p99, sh in v))
