#!/bin/bash
# Session 40, call 5: the stop's last library and tools: every test program and hgca-decode's
# default run 3 times; then hgca-tune's DRAM read, before (hgca-tune-before = 4cbcab4: quick's
# working set 2x the last-level cache, 5 reads) and after (at least 1 GiB, at least 0.2 s of reads),
# --quick --json 3 times each alternating, and the full sweep once with the new one.
CALL=call5; source bench/results/session40/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
for r in 1 2 3; do
  for v in hgca-tune-before hgca-tune; do
    t0=$(date +%s%N); timeout 120 $D/bin/$v --quick --json > $R/$v-quick-r$r.json 2> $R/$v-quick-r$r.err
    echo "$v quick r$r rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
done
t0=$(date +%s%N); timeout 200 $D/bin/hgca-tune --json > $R/hgca-tune-full.json 2> $R/hgca-tune-full.err; echo "hgca-tune full rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
python3 - $R <<'PY'
import json, sys, glob, os
d = sys.argv[1]
for r in (1, 2, 3):
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}")
for f in sorted(glob.glob(f"{d}/hgca-tune*.json")):
    j = json.load(open(f))
    print(f"{os.path.basename(f)}: dram {j['dram_read_gbps']:.1f} GB/s over {j['workload']['working_set_bytes']/2**20:.0f} MiB, engine {j['engine_gbps']:.1f}, best {j['best_config']['isa']}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
