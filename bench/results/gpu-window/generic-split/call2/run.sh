#!/bin/bash
# Session 18, generic-split call 2: call 1 plus the observe kernel split over the group's heads
# where a tile has fewer rows than warps. The same commands as call 1, with this call's binaries.
exec bash bench/results/gpu-window/generic-split/call1/run.sh
