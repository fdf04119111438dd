#!/bin/bash
# Session 40, call 6: the stop's final state (after the diff's review): every test program,
# hgca-decode's default run 3 times, hgca-tune --quick with --out /dev/stdout into a pipe.
CALL=${CALL:-call6}; source bench/results/session40/scripts/common.sh
[ -n "$SKIP_TESTS" ] || for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
[ -n "$SKIP_TESTS" ] || for r in 1 2 3; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
# (Call 6 first piped it into `tee | tail -c 0`, whose early exit killed it with SIGPIPE, rc 141;
# call 7 ran this script again with SKIP_TESTS=1 and the pipe below.)
timeout 120 $D/bin/hgca-tune --quick --json --out /dev/stdout 2> $R/tune.err | cat > $R/tune.out; echo "hgca-tune rc=${PIPESTATUS[0]}"
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for r in (1, 2, 3) if __import__("os").path.exists(f"{d}/decode-r1.json") else ():
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}")
dec = json.JSONDecoder(); text = open(f"{d}/tune.out").read(); objs = []; i = 0
while i < len(text):
    text_i = text[i:].lstrip(); 
    if not text_i: break
    o, n = dec.raw_decode(text_i); objs.append(o); i = len(text) - len(text_i) + n
print(f"hgca-tune: {len(objs)} JSON objects on stdout (report, then the --out file); dram {objs[0]['dram_read_gbps']:.1f}, engine {objs[0]['engine_gbps']:.1f}")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
