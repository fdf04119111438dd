"""Session 32: medians of each FlashD2H row over a call's rounds (GB/s), from data/callN.tgz.
Usage: python3 table.py data/call3.tgz"""
import glob, json, re, statistics, sys, tarfile, tempfile

with tempfile.TemporaryDirectory() as d:
    tarfile.open(sys.argv[1]).extractall(d)
    rows = {}
    for f in sorted(glob.glob(d + '/*/*r[0-9]*.json')):
        if 'decode' in f:
            continue
        for b in json.load(open(f))['benchmarks']:
            n = b['name'].replace('BM_D2H/', '')
            m = re.search(r'slots:(\d+)', n)
            layers = re.search(r'layers:(\d+)', n)
            key = (n.split('/')[0], int(layers.group(1)) if layers else 0, int(m.group(1)))
            rows.setdefault(key, []).append(b['GBps_median'])
    print('| benchmark | layers | slots | GB/s per round | median |')
    print('| --- | --- | --- | --- | --- |')
    for k in sorted(rows):
        v = rows[k]
        print(f'| {k[0]} | {k[1] or "-"} | {k[2]} | {" ".join("%.1f" % x for x in v)} | {statistics.median(v):.1f} |')
    for f in sorted(glob.glob(d + '/*/decode-*.json')):
        j = json.loads(open(f).read().strip().splitlines()[-1])
        print(f.split('/')[-1], 'staging_limit_bytes %d prefill_s %.3f tbt_ms_p50 %.3f transfer_share %.3f'
              % (j['staging_limit_bytes'], j['prefill_s'], j['tbt_ms_p50'], j['transfer_share']))
