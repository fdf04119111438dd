#!/usr/bin/env python3
"""Session 19's dev-machine runs of the engine against the streaming read: python3 summary.py dev*.json"""
import json, sys

print("| benchmark | run | engine GB/s | DRAM read GB/s | engine / read | core shares (engine, read) |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
for i, path in enumerate(sys.argv[1:], 1):
    for b in json.load(open(path))["benchmarks"]:
        name = b["name"].split("/min_time")[0]
        print(f'| {name} | {i} | {b["engine_GBps"]:.1f} | {b["dram_read_GBps"]:.1f} | {b["ratio_to_dram"]:.2f} '
              f'| {b["engine_core_share"]:.2f}, {b["dram_core_share"]:.2f} |')
