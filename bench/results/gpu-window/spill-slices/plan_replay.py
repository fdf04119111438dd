#!/usr/bin/env python3
"""The spilled cluster path's slice choice (choose_split, balanced, up to 16 slices of any length) at
batch 16 W 16384, replayed on the host with the resident blocks by cluster size of a 3-blocks-per-SM
kernel from ../long-slices/call1/probe.txt (the G1 1536-key row: its per-SM residency is the spill
kernel's, 3 per SM, by registers and shared memory; the cluster counts are an assumption, the call
did not print them)."""
spilled = {1: 396, 2: 396, 3: 372, 4: 368, 5: 345, 6: 372, 7: 329, 8: 360, 9: 333, 10: 300, 11: 308,
           12: 336, 13: 299, 14: 294, 15: 315, 16: 336}
cdiv = lambda a, b: -(-a // b)
for hkv in (8, 4):
    pairs, keys = 16 * hkv, 16385
    rows = []
    for n in range(1, 17):
        waves = cdiv(pairs * n, spilled[n])
        rows.append((waves * (cdiv(keys, n) + 160), n, waves))
    cost, n, waves = min(rows)
    one_wave = min(r for r in rows if r[2] == 1)
    print(f"G {32 // hkv} ({pairs} pairs): choose_split takes {n} slices in {waves} wave(s), cost {cost}; "
          f"best one-wave plan {one_wave[1]} slices, cost {one_wave[0]}")
