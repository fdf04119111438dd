"""Prints each hgca-decode run of this folder's tarballs: p50, p99, the first two decode steps, steps
slower than 2 × p50, transfer share, tokens/s. Usage: python3 table.py call*.tgz"""
import io, json, sys, tarfile

for path in sys.argv[1:]:
    with tarfile.open(path) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not m.name.endswith('.jsonl'):
                continue
            text = tar.extractfile(m).read().decode()
            dec, i = json.JSONDecoder(), 0
            while text[i:].strip():
                rest = text[i:].lstrip()
                o, n = dec.raw_decode(rest)
                i = len(text) - len(rest) + n
                t, p = o['tbt_ms'], o['tbt_ms_p50']
                print(f"{path}\t{m.name.split('/')[-1][:-6]}\tp50 {p:.3f}\tp99 {o['tbt_ms_p99']:.2f}\t"
                      f"first2 {t[0]:.2f} {t[1]:.2f}\tslow {sum(x > 2 * p for x in t)}\t"
                      f"share {o['transfer_share']:.3f}\ttok/s {o['tokens_per_s']:.0f}")
