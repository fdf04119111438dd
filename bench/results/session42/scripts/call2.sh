#!/bin/bash
# Session 42, call 2 (c333aa7: node_alloc maps 2 MiB-aligned pages, binds them with
# hwloc_set_area_membind): the test programs again, hgca-decode's default run, and the benchmarks
# on the memory node_alloc places: the CPU engine at 16 threads (HGCA_BENCH_WS_MB=4096, the read
# beside each row), FlashD2H into the store and FlashH2D from it, each with its peer.
CALL=${CALL:-call2}; source bench/results/session42/scripts/common.sh
for t in hgca_tests hgca_numa_tests hgca_model_tests hgca_alloc_tests hgca_gpu_tests hgca_gpu_model_tests hgca_gpu_alloc_tests; do
  t0=$(date +%s); timeout 240 $D/bin/$t > $R/$t.log 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[  (PASSED|FAILED)  \]' $R/$t.log | tr '\n' ' ')"
done
grep -hE "^\[  FAILED  \]" $R/*.log | sort -u | head -20
for r in 1 2; do timeout 40 $D/bin/hgca-decode --json > $R/decode-r$r.json 2> $R/decode-r$r.err; echo "decode r$r rc=$?"; done
HGCA_BENCH_WS_MB=4096 timeout 200 $D/bin/hgca_bench_cpu --benchmark_filter='BM_Decode/threads:0|BM_DecodeVaried/' \
  --benchmark_format=json --benchmark_out=$R/engine.json > /dev/null 2> $R/engine.err; echo "engine rc=$?"
timeout 150 $D/bin/hgca_bench_transfer --benchmark_filter='BM_D2H/flash_store_steady/block_KB:16/slots:(8|16)/threads:0/selected_pct:10/layers:(4|16)/laps:4/|BM_D2H/memcpy_batch/block_KB:16/|BM_H2D/(flash|memcpy_batch|memcpy_per_block)/block_KB:16/' \
  --benchmark_format=json --benchmark_out=$R/transfer.json > /dev/null 2> $R/transfer.err; echo "transfer rc=$?"
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
for r in (1, 2):
    j = json.loads(open(f"{d}/decode-r{r}.json").read().strip().splitlines()[-1])
    print(f"decode r{r}: {j['backend']} p50 {j['tbt_ms_p50']:.3f} ms p99 {j['tbt_ms_p99']:.3f} ms, transfer share {j['transfer_share']:.3f}")
for b in json.load(open(f"{d}/engine.json"))["benchmarks"]:
    print(f"{b['name'].split('/min')[0]:45s} {b.get('label','')[:22]:22s} engine {b['engine_GBps']:6.1f} read {b['dram_read_GBps']:6.1f} ratio {b['ratio_to_dram']:.3f} max/mean {b.get('busy_max_over_mean', 0):.3f}")
for b in json.load(open(f"{d}/transfer.json"))["benchmarks"]:
    print(f"{b['name'].split('/iterations')[0]:90s} {b['bytes_per_second'] / 1e9:6.1f} GB/s")
PY
cd $OUT && tar czf $CALL.tgz $CALL && cat $CALL/machine.txt && rm -rf $CALL
