#!/bin/bash
# Session 18, generic-split call 3: call 2 plus each key tile's loads issued before its stores
# and two dot-product chains (loads-not-kept.patch). The same commands as call 1, with this call's
# binaries.
exec bash bench/results/gpu-window/generic-split/call1/run.sh
