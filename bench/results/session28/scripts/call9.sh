#!/bin/bash
# Session 28, call 9: hgca-decode's default run (main with the store-memory report), 10 runs: does
# a slow decode step coincide with store memory grown by an allocation itself during decode?
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call9; mkdir -p $R
for i in $(seq 1 10); do timeout 30 $D/bin/hgca-decode --json > $R/decode-$i.json 2>$R/decode-$i.err || echo "decode $i rc=$?"; done
python3 - $R <<'PY'
import json, sys, glob
print(f"{'run':<15} {'p50':>6} {'p99':>6} {'max step':>10} {'sync(dec)':>9} {'sync':>5} {'bg':>4} {'chunks':>6}")
for p in sorted(glob.glob(f"{sys.argv[1]}/decode-*.json"), key=lambda p: int(p.split('-')[-1][:-5])):
    r = json.load(open(p)); t = r['tbt_ms']; m = r['store_memory']
    i = max(range(len(t)), key=lambda k: t[k])
    print(f"{p.split('/')[-1]:<15} {r['tbt_ms_p50']:6.3f} {r['tbt_ms_p99']:6.3f} {t[i]:6.3f}@{i:<3} {r['decode_sync_growths']:9d} "
          f"{m['sync_growths']:5d} {m['background_growths']:4d} {m['chunks']:6d}")
PY
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
