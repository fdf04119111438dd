import json, sys
def load(p):
    d = {}
    for b in json.load(open(p))["benchmarks"]:
        if b.get("error_occurred"): continue
        d[(b["name"].split("/")[1], int(b["block_KB"]), int(b["SMs"]))] = b["GBps_median"]
    return d
before, after = load(sys.argv[1]), load(sys.argv[2])
print("block  flash2(b) flash2 flash4(b) flash4 flash8(b) flash8  batch  perblk  8/batch  8/perblk thp8 thpbatch")
for kb in (4, 16, 64):
    f = lambda d, m, s: d.get((m, kb, s), float("nan"))
    b8, a8 = f(before, "flash", 8), f(after, "flash", 8)
    batch, per = f(after, "memcpy_batch", 0), f(after, "memcpy_per_block", 0)
    print(f"{kb:4d}  {f(before,'flash',2):8.1f} {f(after,'flash',2):6.1f} {f(before,'flash',4):8.1f} {f(after,'flash',4):6.1f} {b8:8.1f} {a8:6.1f} {batch:6.1f} {per:6.1f} {a8/batch:7.2f}x {a8/per:8.2f}x {f(after,'flash_thp',8):5.1f} {f(after,'memcpy_batch_thp',0):5.1f}")
