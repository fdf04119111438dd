#!/bin/bash
# Session 34, call 5: calls 3 and 2 once more on whichever host comes (hosts differ in their CPU
# side): issue 5's transfer rows (3 rounds), then issue 4's engine rows with the PyTorch peer
# (2 rounds; hgca-tune not again).
CALL=call5-transfer bash bench/results/session34/scripts/call3.sh
CALL=call5-engine SKIP_TUNE=1 bash bench/results/session34/scripts/call2.sh
