# Call 5 ran pb_32 and pb_4 (main + probe.patch, kSeqs 32 and 4) on flash_store_steady, 2 rounds; call 6:
#!/bin/bash
# Session 14, call 6: the store's nested parallel loops isolated (tbb::this_task_arena::isolate: a thread
# waiting at a sequence's inner join takes only that loop's tasks, not another sequence) against main,
# both with the step probe (probe.patch). kSeqs 32, 16 KB, 4 slots, 10 %. Alternated, 3 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib; B=$D/bin; R=$OUT; mkdir -p $R
F='BM_D2H/flash_store_steady/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:1|BM_D2H/flash_store/block_KB:16/slots:4/threads:0/selected_pct:10/layers:1/laps:4|BM_D2H/flash_pool/block_KB:16/slots:4/threads:0/selected_pct:0'
for r in 1 2 3; do for v in pb_32 pi_32; do
  timeout 150 $B/$v --benchmark_filter="$F" --benchmark_format=json --benchmark_out=$R/${v}_$r.json > /dev/null 2>&1 || echo "$v $r failed"
done; done
python3 - $R <<'PY'
import json, sys
R = sys.argv[1]; rows = {}
for r in (1, 2, 3):
  for v in ("pb_32", "pi_32"):
    for b in json.load(open(f"{R}/{v}_{r}.json"))["benchmarks"]:
      k = b["name"].split("/iter")[0].replace("BM_D2H/", "")
      x = f'{b["GBps_median"]:5.1f} ({b["copy_GBps"]:.0f}/{b["scatter_GBps"]:.0f})'
      if "probe_wall_us" in b: x += f' [{b["probe_wall_us"]:.0f}/{b["probe_task_mean_us"]:.0f}/{b["probe_task_max_us"]:.0f}]'
      rows.setdefault(k, {}).setdefault(v, []).append(x)
for k, d in rows.items():
  print(k)
  for v, name in (("pb_32", "main   "), ("pi_32", "isolate")): print("  " + name + "  " + "   ".join(d.get(v, [])))
PY
