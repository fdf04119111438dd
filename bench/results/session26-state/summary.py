#!/usr/bin/env python3
"""Session 26's tables of main as it stands, from a call's result files (or its .tgz):
  summary.py cpu  DIR|call.tgz   the CPU engine (rN.json) against PyTorch CPU SDPA (torch-rN.json)
  summary.py xfer DIR|call.tgz   FlashH2D, FlashD2H and the compute kernel beside it (rN.json)
Cells: the median over rounds (min-max); ratios between medians of the same call."""
import collections, glob, json, os, statistics as st, sys, tarfile, tempfile


def files(where, pattern):
    if where.endswith(".tgz"):
        tmp = tempfile.mkdtemp()
        tarfile.open(where).extractall(tmp)
        where = tmp
    return sorted(glob.glob(os.path.join(where, "**", pattern), recursive=True))


def cell(v):
    return f"{st.median(v):.1f} ({min(v):.1f}-{max(v):.1f})" if len(v) > 1 else f"{v[0]:.1f}"


def iterations(paths):
    for p in paths:
        for b in json.load(open(p))["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                yield b


def cpu(where):
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for b in iterations(files(where, "r[0-9]*.json")):
        name = b["name"].split("/min_time")[0].split("/iterations")[0]
        for c in ("engine_GBps", "dram_read_GBps", "ratio_to_dram", "busy_max_over_mean"):
            if c in b:
                rows[name][c].append(b[c])
    torch = collections.defaultdict(list)
    for p in files(where, "torch-r*.json"):
        for dt, r in json.load(open(p))["results"].items():
            torch[dt].append(r["GBps_median"])
    print("| benchmark | engine GB/s | DRAM read GB/s | engine / read | PyTorch GB/s | engine / PyTorch | busy max / mean |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, c in sorted(rows.items()):
        dt = "bf16" if "dtype:2" in name else "fp16" if "dtype:1" in name else None
        peer = torch.get(dt) if dt and "threads:0" in name and "Varied" not in name else None
        vs = f"{cell(peer)} | {st.median(c['engine_GBps']) / st.median(peer):.2f}x" if peer else "- | -"
        busy = f"{max(c['busy_max_over_mean']):.3f}" if c["busy_max_over_mean"] else "-"
        print(f"| {name} | {cell(c['engine_GBps'])} | {cell(c['dram_read_GBps'])} | "
              f"{st.median(c['ratio_to_dram']):.2f} | {vs} | {busy} |")


def xfer(where):
    gbps, extra = collections.defaultdict(list), collections.defaultdict(list)
    for b in iterations(files(where, "r[0-9]*.json")):
        parts = b["name"].split("/")
        key = "/".join(parts[:2] + [p for p in parts[2:] if p.startswith(("block_KB", "SMs", "slots", "layers"))])
        if "GBps_median" in b:
            gbps[key].append(b["GBps_median"])
        if "kernel_ms_median" in b:
            extra[key].append(b["kernel_ms_median"])
    med = {k: st.median(v) for k, v in gbps.items()}

    def peer(kind, name, block):
        return med.get(f"{kind}/{name}/block_KB:{block}/SMs:0" if kind == "BM_H2D" else f"{kind}/{name}/block_KB:{block}/slots:0")

    print("| benchmark | GB/s median (min-max) | / cudaMemcpyBatchAsync | / per-block cudaMemcpyAsync |")
    print("| --- | --- | --- | --- |")
    for k in sorted(gbps):
        kind, block = k.split("/")[0], next((p.split(":")[1] for p in k.split("/") if p.startswith("block_KB")), None)
        b, pb = peer(kind, "memcpy_batch", block), peer(kind, "memcpy_per_block", block)
        flash = "/flash" in k
        r = f"{med[k] / b:.2f}x | {med[k] / pb:.2f}x" if flash and b and pb else "- | -"
        print(f"| {k} | {cell(gbps[k])} | {r} |")
    alone = extra.get("BM_Compute/alone")
    for k, v in sorted(extra.items()):
        slow = f", {st.median(v) / st.median(alone) - 1:+.1%} against alone" if alone and k != "BM_Compute/alone" else ""
        print(f"{k}: kernel {cell(v)} ms{slow}")


{"cpu": cpu, "xfer": xfer}[sys.argv[1]](sys.argv[2])
