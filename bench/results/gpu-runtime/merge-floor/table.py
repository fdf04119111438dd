# Prints the merge benchmarks' medians (µs) from Google Benchmark JSON files, one column per file.
import json, sys
runs = [json.load(open(f))["benchmarks"] for f in sys.argv[1:]]
def medians(bs):
    out, seen = [], {}
    for b in bs:
        if b.get("aggregate_name") != "median": continue
        n = b["run_name"]; seen[n] = seen.get(n, 0) + 1
        key = n if seen[n] == 1 else f"{n} (#{seen[n]})"
        out.append((key, b["real_time"], b.get("bytes_per_second", 0) / 1e9))
    return out
cols = [medians(r) for r in runs]
for i, (name, t, bw) in enumerate(cols[0]):
    print(f"{name:48s}" + "".join(f" {c[i][1]:7.2f} us {c[i][2]:5.1f} GB/s" for c in cols))
