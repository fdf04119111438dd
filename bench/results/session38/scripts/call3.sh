#!/bin/bash
# Session 38, call 3: call 1's commands again after the GPU test that shared one buffer between q and
# out gave each its own, and the later fixes to the tools and the C ABI.
CALL=${CALL:-call3} exec bash bench/results/session38/scripts/call1.sh
