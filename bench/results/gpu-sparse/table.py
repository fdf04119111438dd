import json, os
o = os.environ['OUT']
for f in ['gpu_sparse.json', 'store_gpu.json', 'transfer_d2h.json']:
    try:
        for b in json.load(open(f'{o}/{f}'))['benchmarks']:
            c = {k: v for k, v in b.items() if k not in ('name', 'run_name', 'run_type', 'repetitions', 'repetition_index',
                 'threads', 'iterations', 'real_time', 'cpu_time', 'time_unit', 'family_index', 'per_family_instance_index', 'aggregate_name', 'aggregate_unit')}
            print(f[:-5], b['name'][:55], round(b.get('real_time', 0), 2), b.get('time_unit'),
                  {k: (round(v, 2) if isinstance(v, float) else v) for k, v in c.items()})
    except Exception as e:
        print(f, 'ERR', e)
for line in open(f'{o}/decode.json'):
    try:
        d = json.loads(line)
        print('decode', {k: d.get(k) for k in ('backend', 'tokens_per_s', 'tbt_ms_p50', 'tbt_ms_p99', 'transfer_share')})
    except Exception:
        pass
