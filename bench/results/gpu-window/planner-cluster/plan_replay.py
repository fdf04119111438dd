#!/usr/bin/env python3
"""The decode planner of src/gpu/window_attention.cu (choose_split, prefer_cluster) replayed on the
H200's residency (../long-slices/call1/probe.txt): main's prefer_cluster (old) and this change's
(new), the path and plan of every sweep shape, and the model's cost ratio cluster / split + combine.
D 128 only (the probe's)."""
cd = lambda a, b: (a + b - 1) // b


def max_splits(b, hkv, mk):
    return max(min(min(max(8448 // (b * hkv), 1), 128), cd(mk, 64)), cd(mk, 1536))


def choose(b, hkv, mk, max_split, max_n, balanced, slots):
    tiles, best = cd(mk, 64), None
    for n in range(cd(mk, max_split), min(max_n, tiles) + 1):
        sp = cd(tiles, n) * 64 if balanced else cd(cd(mk, n), 64) * 64
        if not balanced and cd(mk, sp) != n:
            continue
        r = slots(n)
        if r <= 0:
            continue
        waves = cd(b * hkv * n, r)
        cost = waves * ((cd(mk, n) if balanced else sp) + 160)
        if best is None or cost < best[2]:
            best = (sp, n, cost, waves)
    return best


SPLIT_SLOTS = {1: 396, 4: 264, 8: 264}  # split kernel at 1536 keys, blocks resident
CLUSTER = {1: [396, 396, 372, 368, 345, 372, 329, 360, 333, 300, 308, 336, 299, 294, 315, 336],
           4: [264, 264, 237, 248, 235, 234, 224, 240, 207, 210, 176, 192, 182, 196, 210, 224],
           8: [264, 264, 237, 248, 235, 234, 224, 240, 207, 210, 176, 192, 182, 196, 210, 224]}
CLUSTER_KEYS = {1: 2752, 4: 3072, 8: 1536}


def old_rule(one, two):  # main before this change
    if one is None:
        return False
    if 2 <= one[3] <= 5:
        return one[2] <= two[2]
    return one[2] * 100 <= two[2] * (125 if two[3] >= 3 else 110)


def new_rule(one, two):  # this change
    if one is None:
        return False
    return one[2] * 100 <= two[2] * (130 if two[3] >= 3 else 110)


print("| batch | Hkv (G) | W | main | this change | slices × keys | waves | cluster cost / combine cost |")
for b in (1, 16, 64):
    for hkv, g in ((32, 1), (8, 4), (4, 8)):
        for w in (1024, 4096, 16384):
            mk = w + 1
            two = choose(b, hkv, mk, 1536, max_splits(b, hkv, mk), False, lambda n: SPLIT_SLOTS[g])
            one = choose(b, hkv, mk, CLUSTER_KEYS[g], 16, True, lambda n: CLUSTER[g][n - 1])
            o = "cluster" if old_rule(one, two) else "combine"
            n = "cluster" if new_rule(one, two) else "combine"
            pl = one if n == "cluster" else two
            print(f"| {b} | {hkv} ({g}) | {w} | {o} | {n}{' **changed**' if o != n else ''} | "
                  f"{pl[1]} × {pl[0]} | {pl[3]} | {one[2] / two[2]:.3f} |")
