import json, os
o = os.environ['OUT']
for line in open(f'{o}/decode.json'):
    try:
        d = json.loads(line)
        r = {k: d.get(k) for k in ('overflow', 'tokens_per_s', 'tbt_ms_p50', 'tbt_ms_p99', 'transfer_share')}
        r['moved_items'] = sum(l.get('overflow_items', 0) for l in d.get('layers', []))
        r['moved_calls'] = sum(l.get('overflow_calls', 0) for l in d.get('layers', []))
        print('decode', r)
    except Exception:
        pass
try:
    for b in json.load(open(f'{o}/layer.json'))['benchmarks']:
        print('layer', b['name'][:70], round(b.get('real_time', 0), 3), b.get('time_unit'))
except Exception as e:
    print('layer ERR', e)
try:
    print('peer', open(f'{o}/torch_copy_sdpa.json').read()[:1500])
except Exception as e:
    print('peer ERR', e)
