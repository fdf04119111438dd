#!/bin/bash
# Session 42, call 1: every test program (this stop changed begin_step's out-of-memory message, the
# C ABI's messages and the tools), the installed-package consumers on both backends, hgca-decode's
# default run 3 times with --json (the new cpu/config fields on the CUDA backend), and hgca-tune
# --quick --json 3 times (the configuration's ISA rule on 16 cores) plus one table with its plot.
CALL=${CALL:-call1}; source bench/results/session42/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
for c in "consumer_c" "consumer_cpp" "consumer_cpp cuda"; do $D/bin/$c > $R/"${c// /-}".log 2>&1; echo "$c rc=$?: $(tail -1 $R/"${c// /-}".log)"; done
for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
for r in 1 2 3; do timeout 120 $D/bin/hgca-tune --quick --json > $R/tune-r$r.json 2> $R/tune-r$r.err; echo "tune r$r rc=$?"; done
timeout 120 $D/bin/hgca-tune --quick --out $R/tuned.json --svg $R/bandwidth.svg > $R/tune-table.txt 2> $R/tune-table.err; echo "tune table rc=$?"
HGCA_CONFIG= timeout 40 $D/bin/hgca-decode --config $R/tuned.json --json > $R/decode-config.json 2> $R/decode-config.err; echo "decode --config rc=$?"
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for r in (1, 2, 3):
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: {j['backend']} p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}, cpu {j['cpu']['isa']} threads {j['cpu']['threads_per_node']}")
for r in (1, 2, 3):
    j = json.load(open(f"{d}/tune-r{r}.json"))
    top, best = j['ranked'][0], j['ranked'][j['best_rank'] - 1]
    print(f"tune r{r}: DRAM {j['dram_read_gbps']:.1f} engine {j['engine_gbps']:.1f} GB/s; rank 1 isa {top['isa']} {top['engine_gbps']:.1f}; best_rank {j['best_rank']} isa {best['isa']} {best['engine_gbps']:.1f}")
j = json.loads(open(f"{d}/decode-config.json").read().strip().splitlines()[-1])
print(f"decode --config: cpu {j['cpu']}, threads_used {j['threads_used']}, config {j['config']}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
