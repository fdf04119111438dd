#!/usr/bin/env python3
"""Engine GB/s / DRAM read GB/s = ratio per benchmark row and build, from hgca_bench_cpu JSON files.
Usage: table.py 'dev/dev-B-r*.json' base new   (B in the pattern stands for each build's name)."""
import glob
import json
import sys

pat, names = sys.argv[1], sys.argv[2:]
rows = {}
for b in names:
    for p in sorted(glob.glob(pat.replace('B', b))):
        for x in json.load(open(p))['benchmarks']:
            n = x['name'].split('/min_time')[0].replace('BM_', '')
            rows.setdefault(n, {}).setdefault(b, []).append((x['engine_GBps'], x['dram_read_GBps']))
print('| benchmark | ' + ' | '.join(names) + ' |')
print('| --- |' + ' --- |' * len(names))
for n, v in rows.items():
    print(f'| {n} | ' + ' | '.join(', '.join(f'{e:.1f}/{r:.1f} = {e / r:.2f}' for e, r in v.get(b, [])) for b in names) + ' |')
