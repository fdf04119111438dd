#!/bin/bash
# Session 36, call 8: the library as committed (bin/d1: FlashH2D picks the 1.5 KB parameter block by
# the call's span count, ≤ 64) on the GPU machine: the whole GPU suite, the model tests, the
# allocation-failure sweep; 3 rounds of the 16 KB H2D rows (idle and queued) and BM_H2DHost against
# main before it (bin/d0), alternating; hgca-decode's default run 3 times.
CALL=${CALL:-call8}; source bench/results/session36/scripts/common.sh
timeout 240 $D/bin/d1/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 60 $D/bin/d1/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
timeout 60 $D/bin/d1/hgca_gpu_alloc_tests > $R/gpu_alloc_tests.log 2>&1; echo "hgca_gpu_alloc_tests rc=$?"
python3 -c "
import torch, time
t0=time.time(); xs=[torch.ones(8<<30, dtype=torch.uint8) for _ in range(10)]; print('touched 80 GiB in %.1f s' % (time.time()-t0))"
for r in 1 2 3; do
  for v in d0 d1; do
    timeout 60 $D/bin/$v/hgca_bench_transfer --benchmark_filter='BM_H2D/(flash|flash_queued|memcpy_contiguous|memcpy_contiguous_queued)/block_KB:16/|BM_H2DHost' \
      --benchmark_format=json --benchmark_out=$R/$v-r$r.json > /dev/null 2> $R/$v-r$r.err || echo "$v round $r failed"
  done
done
for r in 1 2 3; do timeout 40 $D/bin/d1/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err || echo "decode r$r failed"; done
cd $OUT && tar czf $CALL.tgz $CALL
for f in gpu_tests model_tests gpu_alloc_tests; do
  echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $CALL/$f.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]|SKIPPED \] [A-Z]" $CALL/*.log | sort -u | head -20
python3 - $CALL <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/d*-r*.json")):
    v = f.split("/")[-1].rsplit("-r", 1)[0]
    for b in json.load(open(f)).get("benchmarks", []):
        n = b["name"].split("/iterations")[0].replace("block_KB:", "")
        rows.setdefault((n, v), []).append("%.1f" % b["GBps_median"] if "GBps_median" in b else "%.1fus" % b["host_us_median"] if "host_us_median" in b else b.get("error_message", "?"))
for (n, v), x in sorted(rows.items()): print(f"{n:<44} {v}", *x)
for r in (1, 2, 3):
    try:
        j = json.loads(open(f"{sys.argv[1]}/decode-r{r}.json").read().strip().splitlines()[-1])
        print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}, {j['tokens_per_s']:.0f} tok/s, backend {j.get('backend')}")
    except Exception as e:
        print(f"decode r{r}: ? ({e})")
PY
cat $CALL/machine.txt; rm -rf $CALL
