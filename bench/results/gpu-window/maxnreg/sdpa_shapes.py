#!/usr/bin/env python3
"""The SDPA peer (torch_sdpa_window.py's bench) on the shapes given as B:Hkv:W arguments; same JSON."""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import torch_sdpa_window as peer
out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "results": []}
for a in sys.argv[1:]:
    b, h, w = map(int, a.split(":"))
    out["results"].append(peer.bench(b, h, w))
json.dump(out, sys.stdout, indent=1)
print()
