# Median per (binary, benchmark) over runs where both the engine and the streaming read held their cores
# (core_share >= 0.95), split by the streaming read's mode (< 45 GB/s: low, >= 45: high).
# Usage: python3 summary.py ab*.json final*.json
import json, sys, glob, statistics as st, collections
rows = collections.defaultdict(list)
for f in sys.argv[1:]:
    base = f.split('/')[-1]
    binname = base.split('_')[1].split('.')[0] if base.startswith('ab') else 'old2'  # final*.json: main's kernel
    for b in json.load(open(f))['benchmarks']:
        if 'engine_GBps' not in b or b.get('error_occurred'): continue
        if min(b['engine_core_share'], b['dram_core_share']) < 0.95: continue
        mode = 'low' if b['dram_read_GBps'] < 45 else 'high'
        name = b['name'].replace('/min_time:1.000/manual_time', '').replace('BM_', '')
        rows[(name, mode, binname)].append((b['engine_GBps'], b['dram_read_GBps'], b['ratio_to_dram']))
for k in sorted(rows):
    v = rows[k]
    e = [x[0] for x in v]; d = [x[1] for x in v]; r = [x[2] for x in v]
    print('| %s | %s | %s | %d | %.1f (%.1f–%.1f) | %.1f | %.2f (%.2f–%.2f) |' % (k[0], k[2], k[1], len(v), st.median(e), min(e), max(e), st.median(d), st.median(r), min(r), max(r)))
