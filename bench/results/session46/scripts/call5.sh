#!/bin/bash
# Session 46, call 5 (the commit in .device/commit; one H200): issue 4's rows at 16 threads against the
# PyTorch peer made fairer after an audit (its tensors on transparent huge pages, every CPU SDPA backend
# timed and the fastest reported): peer (THP on), the engine's rows, peer with THP off (the old
# setting, for the difference), peer (THP on) again; table by session 38's engine_table.py.
CALL=${CALL:-call5}; source bench/results/session46/scripts/common.sh
export HGCA_BENCH_WS_MB=4096
timeout 150 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-1.json 2> $R/torch-1.err || echo "peer 1 failed"
timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0/isa:(4|1)/|BM_DecodeVaried/' \
  --benchmark_out=$R/engine-r1.json --benchmark_out_format=json > $R/engine-r1.txt 2>&1 || echo "engine rc=$?"
THP_MEM_ALLOC_ENABLE=0 timeout 150 python3 bench/peers/torch_cpu_sdpa.py > $R/thp-off.json 2> $R/thp-off.err || echo "peer thp-off failed"
timeout 150 python3 bench/peers/torch_cpu_sdpa.py > $R/torch-2.json 2> $R/torch-2.err || echo "peer 2 failed"
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for f in ("torch-1.json", "thp-off.json", "torch-2.json"):
    try: j = json.load(open(f"{d}/{f}"))
    except Exception as e: print(f, "unreadable", e); continue
    print(f, "thp", j.get("thp"), "THP_MEM_ALLOC_ENABLE", j.get("thp_mem_alloc_enable"), "threads", j["threads"])
    for dt, x in j["results"].items():
        per = {k: round(v["GBps_median"], 1) if "GBps_median" in v else v.get("error", "")[:40] for k, v in x["backends"].items()}
        print(f"  {dt}: {x['GBps_median']:.1f} GB/s ({x['backend']}); backends {per}")
PY
python3 bench/results/session38/scripts/engine_table.py $R
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
