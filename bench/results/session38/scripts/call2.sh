#!/bin/bash
# Session 38, call 2: call 1's commands again after this session's fixes (the NUMA tests' XML without
# a comment, abort_step, out overlapping an input refused, memory errors naming the call).
CALL=${CALL:-call2} exec bash bench/results/session38/scripts/call1.sh
