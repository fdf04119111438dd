#!/bin/bash
# Session 40, call 3: hgca-tune's measurement time per configuration. hgca-tune-before (bbbc8df: a
# fixed step count per point) and hgca-tune (at least 0.05 s a point with --quick, 0.2 s without),
# alternating, --quick --json twice each, then the full sweep once each. How far apart a
# configuration ranks from itself: isa `auto` is measured beside the ISA it resolves to.
# Call 4 ran it again (CALL=call4) with hgca-tune at the rounds (3 rounds of the ranked
# configurations, each its median, at least 0.05 s a measurement).
CALL=${CALL:-call3}; source bench/results/session40/scripts/common.sh
for r in 1 2; do
  for v in hgca-tune-before hgca-tune; do
    t0=$(date +%s%N); timeout 120 $D/bin/$v --quick --json > $R/$v-quick-r$r.json 2> $R/$v-quick-r$r.err
    echo "$v quick r$r rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
done
for v in hgca-tune-before hgca-tune; do
  t0=$(date +%s%N); timeout 200 $D/bin/$v --json > $R/$v-full.json 2> $R/$v-full.err
  echo "$v full rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
python3 - $R <<'PY'
import json, sys, glob, os, statistics
for f in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    j = json.load(open(f))
    auto_is = j["isa_auto_is"]
    by = {}
    for r in j["ranked"]:
        by[(r["isa"], r["max_packed_heads"], r["kv_split_tokens"], r["numa_placement"])] = r["engine_gbps"]
    gaps = []
    for (isa, p, s, pl), g in by.items():
        if isa == "auto" and (auto_is, p, s, pl) in by:
            o = by[(auto_is, p, s, pl)]
            gaps.append(abs(g - o) / ((g + o) / 2))
    b = j["best_config"]
    print(f"{os.path.basename(f)}: dram {j['dram_read_gbps']:.1f} engine {j['engine_gbps']:.1f} best {b['isa']}/{b['kv_split_tokens']}/{b['max_packed_heads']}; "
          f"auto vs {auto_is}: max gap {max(gaps)*100:.1f} %, median {statistics.median(gaps)*100:.1f} % over {len(gaps)} pairs")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
