#!/bin/bash
# Session 29, dev machine (2 Zen 4 vCPUs, no GPU: the host backend): hgca-decode before (bcb66ba's
# build, /tmp/before/hgca-decode-before) and after (b23c53d), alternating: the default run 3 times,
# a 4-layer 4K-token run twice.
mkdir -p /tmp/dev
for i in 1 2 3; do for b in before after; do
  bin=build/default/tools/hgca-decode/hgca-decode; [ $b = before ] && bin=/tmp/before/hgca-decode-before
  $bin --json > /tmp/dev/default-$b-$i.json
done; done
for i in 1 2; do for b in before after; do
  bin=build/default/tools/hgca-decode/hgca-decode; [ $b = before ] && bin=/tmp/before/hgca-decode-before
  /usr/bin/time -f "%e" -o /tmp/dev/l4-$b-$i.time $bin --json --layers 4 --q-heads 32 --kv-heads 8 --head-dim 128 \
    --batch 1 --context 4096 --chunk 512 --decode-steps 16 > /tmp/dev/l4-$b-$i.json
done; done
