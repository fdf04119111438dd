#!/bin/bash
# Session 38, call 6: call 1's commands again after the second review's fixes (the store's up-front
# refusal with the cgroup's limit, hgca-tune's rotation after a placement).
CALL=${CALL:-call6} exec bash bench/results/session38/scripts/call1.sh
