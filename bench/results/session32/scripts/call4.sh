#!/bin/bash
# Session 32, call 4: shared staging slots (Options::staging_limit_bytes): the GPU suite and model
# tests; hgca-decode at 32 layers with 16 MiB calls, the default 128 MiB (8 slots) against 2 slots
# per layer (--staging-mib 100000), alternating; FlashD2H into the stores at 16 and 32 layers, both
# slot counts, 4 rounds.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH; R=$OUT/call4; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader > $R/machine.txt
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null || true
timeout 200 $D/bin/hgca_gpu_tests > $R/gpu_tests.log 2>&1; echo "hgca_gpu_tests rc=$?"
timeout 60 $D/bin/hgca_gpu_model_tests > $R/model_tests.log 2>&1; echo "hgca_gpu_model_tests rc=$?"
for f in gpu_tests model_tests; do echo "$f: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' $R/$f.log | tr '\n' ' ')"; done
grep -E "^\[  FAILED  \]" $R/gpu_tests.log | head
W="--layers 32 --q-heads 32 --kv-heads 8 --head-dim 128 --batch 8 --context 2048 --chunk 512 --decode-steps 64"
for r in 1 2; do
  for mib in 128 100000; do
    t0=$(date +%s)
    timeout 90 $D/bin/hgca-decode $W --staging-mib $mib --json > $R/decode-$mib-r$r.json 2> $R/decode-$mib-r$r.err || echo "decode $mib r$r failed"
    echo "decode staging $mib MiB round $r: $(( $(date +%s) - t0 )) s"
  done
done
S='BM_D2H/flash_copy_only/block_KB:16/slots:2/|BM_D2H/flash_store(_steady|_steady_varied)?/block_KB:16/slots:[0-9]+/threads:0/selected_pct:10/layers:(16|32)/'
for r in 1 2 3 4; do
  timeout 100 $D/bin/hgca_bench_transfer --benchmark_filter="$S" --benchmark_format=json --benchmark_out=$R/xfer-r$r.json > /dev/null 2>&1 || echo "xfer round $r failed"
done
python3 - $R <<'PY'
import json,sys,glob
R=sys.argv[1]
for f in sorted(glob.glob(R+'/decode-*.json')):
  try:
    j=json.loads(open(f).read().strip().splitlines()[-1])
    print(f.split('/')[-1], {k:j[k] for k in j if any(s in k for s in ('prefill','p50','p99','transfer','tokens_per'))})
  except Exception as e: print(f, 'unreadable', e)
rows={}
for f in sorted(glob.glob(R+'/xfer-r*.json')):
  for b in json.load(open(f))['benchmarks']:
    n=b['name'].replace('BM_D2H/','')
    k=(n.split('/')[0], n.split('slots:')[1].split('/')[0], (n.split('layers:')[1].split('/')[0] if 'layers:' in n else '-'))
    rows.setdefault(k,[]).append('%.1f'%b.get('GBps_median',0))
for k,v in rows.items(): print(*k, *v)
PY
cat $R/machine.txt
cd $OUT && tar czf call4.tgz call4 && rm -rf call4
