"""Session 33: medians of each FlashD2H row over a call's rounds (GB/s), by build where a call ran
two (old/new, glibc/tbb), from data/callN.tgz; and hgca-decode's runs where it has them.
Usage: python3 table.py data/call5.tgz"""
import glob, json, re, statistics, sys, tarfile, tempfile

with tempfile.TemporaryDirectory() as d:
    tarfile.open(sys.argv[1]).extractall(d)
    rows = {}
    for f in sorted(glob.glob(d + '/*/*r[0-9]*.json')):
        name = f.split('/')[-1]
        if name.startswith('decode'):
            continue
        build = name.split('-')[0] if '-' in name else ''
        for b in json.load(open(f))['benchmarks']:
            if 'GBps_median' not in b:
                continue
            n = b['name'].replace('BM_D2H/', '')
            slots = re.search(r'slots:(\d+)', n)
            layers = re.search(r'layers:(\d+)', n)
            key = (n.split('/')[0], int(layers.group(1)) if layers else 0, int(slots.group(1)) if slots else 0, build)
            rows.setdefault(key, []).append(b['GBps_median'])
    print('| benchmark | layers | slots | build | GB/s per round | median |')
    print('| --- | --- | --- | --- | --- | --- |')
    for k in sorted(rows):
        v = rows[k]
        print(f'| {k[0]} | {k[1] or "-"} | {k[2]} | {k[3] or "-"} | {" ".join("%.1f" % x for x in v)} | {statistics.median(v):.1f} |')
    for f in sorted(glob.glob(d + '/*/decode-*.json')):
        j = json.loads(open(f).read().strip().splitlines()[-1])
        print(f.split('/')[-1], 'tbt_ms_p50 %.3f tbt_ms_p99 %.3f transfer_share %.3f'
              % (j['tbt_ms_p50'], j['tbt_ms_p99'], j['transfer_share']))
