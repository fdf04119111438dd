#!/usr/bin/env python3
"""Tables of session 19's FlashD2H timeline calls: python3 summary.py data/callNN-*.tgz ...

Per benchmark run (one JSON): the end-to-end rate (GBps_median) with the copy's and the scatter's
own rates, and from its timeline (<run>_<method>.tsv: one line per step of the last timed
iteration; method 0 flash_store, 2 flash_store_steady, 3 flash_pool) the step times: median,
mean, max, and the steps over 1.6 x the median with their excess over it.
"""
import io, json, statistics as st, sys, tarfile

METHODS = {"flash_store": 0, "flash_store_steady": 2, "flash_pool": 3}

for path in sys.argv[1:]:
    print(f"== {path}")
    with tarfile.open(path) as tar:
        files = {m.name.split("/")[-1]: m for m in tar.getmembers() if m.isfile()}
        read = lambda n: tar.extractfile(files[n]).read().decode()
        for name in sorted(n for n in files if n.endswith(".json")):
            run = name[:-5]
            for b in json.loads(read(name))["benchmarks"]:
                kind = b["name"].split("/")[1]
                cell = f'{run:12s} {kind:19s} {b["GBps_median"]:5.1f} GB/s (copy {b.get("copy_GBps", 0):4.1f}, scatter {b.get("scatter_GBps", 0):4.1f})'
                tsv = f"{run}_{METHODS.get(kind, -1)}.tsv"
                if tsv in files:
                    d = [float(l.split()[6]) - float(l.split()[5]) for l in read(tsv).splitlines() if l.strip()]
                    m = st.median(d)
                    out = [x for x in d if x > 1.6 * m]
                    cell += f" | steps µs: median {m:4.0f} mean {st.mean(d):4.0f} max {max(d):5.0f}, {len(out)} over 1.6x median (+{sum(x - m for x in out):.0f})"
                print(cell)
