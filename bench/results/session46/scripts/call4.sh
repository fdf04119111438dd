#!/bin/bash
# Session 46, call 4 (the commit in .device/commit; one H200): issue 5's peers after an audit of the
# transfer bench. (a) cudaMemcpyBatchAsync at 16 KB as before (4096 copies per call, stream order) and
# tuned (256 / 1024 / 4096 copies per call × stream order / any order / any order + PreferOverlapWithCompute;
# 4 and 64 KB at 1024, any + overlap), beside FlashH2D on 2/4/8 SMs and the contiguous copy, 3 rounds,
# medians (GBps_median) and the host time inside the calls (host_ms_median); (b) the compute kernel
# alone, beside FlashD2H (now timed once FlashD2H moves, counted step by step, into faulted-in stores)
# and beside an 8-SM copy, 3 rounds.
CALL=${CALL:-call4}; source bench/results/session46/scripts/common.sh
for r in 1 2 3; do
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|memcpy_batch|memcpy_batch_tuned|memcpy_contiguous)/block_KB:(4|16|64)/' \
    --benchmark_format=json --benchmark_out=$R/h2d-r$r.json > /dev/null 2> $R/h2d-r$r.err; echo "h2d r$r rc=$?"
  timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter='BM_Compute/' \
    --benchmark_format=json --benchmark_out=$R/compute-r$r.json > /dev/null 2> $R/compute-r$r.err; echo "compute r$r rc=$?"
done
python3 - $R <<'PY' | tee $R/table.txt
import json, sys, collections
d = sys.argv[1]
rows = collections.OrderedDict()
for r in (1, 2, 3):
    for f in (f"h2d-r{r}.json", f"compute-r{r}.json"):
        try: bs = json.load(open(f"{d}/{f}"))["benchmarks"]
        except Exception as e: print("missing", f, e); continue
        for b in bs:
            name = b['name'].split('/iterations')[0].replace('/real_time', '').replace('/manual_time', '')
            if 'error_occurred' in b: rows.setdefault(name, []).append('error: ' + b.get('error_message', '')); continue
            if 'GBps_median' in b: v = f"{b['GBps_median']:.1f} GB/s (host {b.get('host_ms_median', float('nan')):.1f} ms)"
            else: v = f"kernel {b['kernel_ms_median']:.3f} ms, beside {b['beside_GBps']:.1f} GB/s"
            rows.setdefault(name, []).append(v)
for name, vs in rows.items(): print(f"{name:75s} | " + " | ".join(vs))
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
