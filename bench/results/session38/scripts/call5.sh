#!/bin/bash
# Session 38, call 5: call 1's commands again on the library's last state of the session (the store
# memory's up-front refusal, hgca-tune's and hgca-decode's last fixes).
CALL=${CALL:-call5} exec bash bench/results/session38/scripts/call1.sh
