#!/usr/bin/env python3
"""Medians of a transfer call's rounds (call 3, call 5-transfer) as Markdown, with the peers' ratios.
Usage: table.py DIR (the unpacked call folder holding r1.json, r2.json, ...)."""
import glob, json, statistics, sys

rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/r*.json")):
    for b in json.load(open(f))["benchmarks"]:
        n = b["name"].split("/iterations")[0]
        rows.setdefault(n, []).append(b["kernel_ms_median"] if n.startswith("BM_Compute") else b["GBps_median"])
med = {n: statistics.median(v) for n, v in rows.items()}
print("| FlashH2D, GB/s (median of rounds) | 4 KB | 16 KB | 64 KB |\n| --- | --- | --- | --- |")
for sms in (2, 4, 8):
    print(f"| {sms} SMs | " + " | ".join(f"{med[f'BM_H2D/flash/block_KB:{kb}/SMs:{sms}']:.1f}" for kb in (4, 16, 64)) + " |")
for peer in ("memcpy_batch", "memcpy_per_block"):
    print(f"| {peer} | " + " | ".join(f"{med[f'BM_H2D/{peer}/block_KB:{kb}/SMs:0']:.1f}" for kb in (4, 16, 64)) + " |")
for peer in ("memcpy_batch", "memcpy_per_block"):
    print(f"| 8 SMs ÷ {peer} | " + " | ".join(f"{med[f'BM_H2D/flash/block_KB:{kb}/SMs:8'] / med[f'BM_H2D/{peer}/block_KB:{kb}/SMs:0']:.2f}×" for kb in (4, 16, 64)) + " |")
print(f"\none contiguous cudaMemcpyAsync H2D (16 KB row): {med['BM_H2D/memcpy_contiguous/block_KB:16/SMs:0']:.1f}\n")
slots = {1: 4, 2: 4, 4: 8, 8: 9, 16: 8, 32: 8}
print("| FlashD2H into the stores, GB/s | " + " | ".join(f"{l} layer{'s' if l > 1 else ''}" for l in slots) + " |")
print("| --- |" + " --- |" * len(slots))
for kind, label in (("flash_store", "fresh"), ("flash_store_steady", "grown"), ("flash_store_steady_varied", "varied")):
    cells = []
    for l, s in slots.items():
        n = f"BM_D2H/{kind}/block_KB:16/slots:{s}/threads:0/selected_pct:10/layers:{l}/laps:4"
        cells.append(f"{med[n]:.1f}" if n in med else "")
    print(f"| {label} | " + " | ".join(cells) + " |")
pb, bt = med["BM_D2H/memcpy_per_block/block_KB:16/slots:0/threads:0/selected_pct:0"], med["BM_D2H/memcpy_batch/block_KB:16/slots:0/threads:0/selected_pct:0"]
g4 = med["BM_D2H/flash_store_steady/block_KB:16/slots:8/threads:0/selected_pct:10/layers:4/laps:4"]
print(f"\nD2H peers: per block {pb:.1f}, cudaMemcpyBatchAsync {bt:.1f}, the copies alone "
      f"{med['BM_D2H/flash_copy_only/block_KB:16/slots:2/threads:0/selected_pct:0']:.1f}; FlashD2H grown 4 layers "
      f"{g4 / pb:.1f}× per block, {g4 / bt:.1f}× batch")
a, f, s = (med[f"BM_Compute/{k}"] for k in ("alone", "beside_flash_d2h", "beside_sm_copy"))
print(f"compute kernel {a:.3f} ms alone, {f:.3f} beside FlashD2H ({100 * (f / a - 1):+.1f} %), {s:.3f} beside an SM copy ({100 * (s / a - 1):+.1f} %)")
