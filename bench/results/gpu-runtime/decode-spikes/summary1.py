import json, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line: continue
    try: j = json.loads(line)
    except Exception as e: print("bad line", line[:80]); continue
    r = j["run"]; t = r["tbt_ms"]; e = r.get("enqueue_ms")
    big = [i for i, x in enumerate(t) if x > 2 * r["tbt_ms_p50"]]
    info = f'{j["label"]:<12} p50 {r["tbt_ms_p50"]:.3f} p99 {r["tbt_ms_p99"]:.3f} max {max(t):.3f} first {t[0]:.3f} n>2xp50 {len(big):3d}/{len(t)}'
    if e:
        info += f' enq p50 {st.median(e):.3f} enq@spikes ' + ",".join(f"{e[i]:.2f}/{t[i]:.2f}" for i in big[:6])
    else:
        info += ' spikes@' + ",".join(str(i) for i in big[:10])
    print(info)
