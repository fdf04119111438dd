#!/usr/bin/env python3
"""The loops of a kernel's SASS (NAME.k.txt from mk.sh): every backward branch, with the
instructions between its target and itself. The K pass's tile loop is the first of ~389, the V
pass's the next long one. usage: loops.py NAME..."""
import re, sys
for n in sys.argv[1:]:
    lines = [l.split(' ', 1) for l in open(n + '.k.txt').read().splitlines()]
    print('==', n, len(lines))
    for a, ins in lines:
        m = re.search(r'BRA (?:`\()?.*?(0x[0-9a-f]+)', ins)
        if m:
            t, ai = int(m.group(1), 16), int(a, 16)
            if t < ai: print(f'{a}: back to {t:x}, body {(ai - t) // 16 + 1} instr')
