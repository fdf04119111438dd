"""Prints the transfer benchmark's and hgca-decode's numbers as tables (run on the GPU machine)."""
import json
import sys

out = sys.argv[1]
try:
    bench = json.load(open(f"{out}/transfer.json"))["benchmarks"]
except FileNotFoundError:
    bench = []
by = {b["name"]: b for b in bench if "error_occurred" not in b}
errors = [b["name"] + ": " + b.get("error_message", "") for b in bench if "error_occurred" in b]

def gbps(name):
    b = by.get(name)
    return b["GBps_median"] if b else float("nan")

if bench:
  print("H2D, scattered blocks from a 1 GiB pinned pool, 256 MB per run (GB/s, median)")
  print(f"{'block':>6} {'flash 2 SMs':>11} {'4 SMs':>7} {'8 SMs':>7} {'batch':>7} {'per-block':>9} {'8SM/batch':>9} {'8SM/per-block':>13}")
  for kb in (4, 16, 64):
      f = [gbps(f"BM_H2D/flash/block_KB:{kb}/SMs:{s}/iterations:12/manual_time") for s in (2, 4, 8)]
      bt = gbps(f"BM_H2D/memcpy_batch/block_KB:{kb}/SMs:0/iterations:6/manual_time")
      pb = gbps(f"BM_H2D/memcpy_per_block/block_KB:{kb}/SMs:0/iterations:4/manual_time")
      print(f"{kb:>4}KB {f[0]:>11.1f} {f[1]:>7.1f} {f[2]:>7.1f} {bt:>7.1f} {pb:>9.1f} {f[2]/bt:>8.2f}x {f[2]/pb:>12.2f}x")
  print("\nH2D from the pool on transparent huge pages (registered), GB/s median")
  for kb in (4, 16, 64):
      b = by.get(f"BM_H2D/flash_thp/block_KB:{kb}/SMs:8/iterations:12/manual_time")
      if b:
          bt = gbps(f"BM_H2D/memcpy_batch_thp/block_KB:{kb}/SMs:0/iterations:6/manual_time")
          print(f"{kb:>4}KB flash 8 SMs {b['GBps_median']:.1f}  batch {bt:.1f}  huge-page fraction {b['huge_page_fraction']:.2f}")
  print("\nD2H, 32 sequences x 8 heads evict a block each per step, 256 MB per run (GB/s, median)")
  print(f"{'block':>6} {'flash->store':>12} {'flash->pool':>11} {'batch':>7} {'per-block':>9} {'store/batch':>11} {'store/per-block':>15}")
  for kb in (4, 16, 64):
      st = gbps(f"BM_D2H/flash_store/block_KB:{kb}/iterations:6/manual_time")
      po = gbps(f"BM_D2H/flash_pool/block_KB:{kb}/iterations:6/manual_time")
      bt = gbps(f"BM_D2H/memcpy_batch/block_KB:{kb}/iterations:6/manual_time")
      pb = gbps(f"BM_D2H/memcpy_per_block/block_KB:{kb}/iterations:4/manual_time")
      print(f"{kb:>4}KB {st:>12.1f} {po:>11.1f} {bt:>7.1f} {pb:>9.1f} {st/bt:>10.2f}x {st/pb:>14.2f}x")
  print("\nCompute-bound kernel (ms, median of 15) alone and with a transfer beside it")
  alone = by.get("BM_Compute/alone/iterations:15/manual_time")
  for name in ("alone", "beside_flash_d2h", "beside_sm_copy"):
      b = by.get(f"BM_Compute/{name}/iterations:15/manual_time")
      if not b or not alone:
          continue
      slow = 100.0 * (b["kernel_ms_median"] / alone["kernel_ms_median"] - 1.0)
      print(f"{name:>18}: {b['kernel_ms_median']:.3f} ms ({slow:+.2f} %), transfer beside {b['beside_GBps']:.1f} GB/s")

print("\nhgca-decode default (synthetic), before (main + transfer statistic) and after (FlashD2H)")
print(f"{'run':>8} {'tok/s':>8} {'tbt p50':>8} {'p99':>7} {'mean':>7} {'max':>7} {'transfer ms':>11} {'share':>6}")
for which in ("before", "after"):
    for i, line in enumerate(open(f"{out}/decode-{which}.json")):
        j = json.loads(line)
        tbt = j["tbt_ms"]
        print(f"{which}{i:>2} {j['tokens_per_s']:>8.0f} {j['tbt_ms_p50']:>8.3f} {j['tbt_ms_p99']:>7.3f} "
              f"{sum(tbt)/len(tbt):>7.3f} {max(tbt):>7.3f} {j['decode_transfer_ms']:>11.3f} {100*j['transfer_share']:>5.1f}%")
if errors:
    print("\nerrors:", *errors, sep="\n  ")
